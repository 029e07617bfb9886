"""Click models: from observed impressions and clicks to a score and a grade per (query, document).

Each model says how many clicks a pair would get if it were as attractive as the average result,
and scores the pair by its clicks over that expectation:

* ``coec`` (clicks over expected clicks; Zhang and Jones 2007, the Search Relevance Workbench's
  implicit judgments): the expectation sums, over every search that showed the pair, the log's
  click-through rate at the rank it was shown at, so a result shown low is not blamed for the few
  clicks low ranks get;
* ``ctr`` (raw click-through rate, no position correction): the expectation is its impressions
  times the log's overall click-through rate, so the score is the pair's CTR in units of the
  average (its order is raw CTR's).

A score of 1 is "clicked as much as expected"; grades follow the spec's cut points (default: a
score of 2 or more is relevant). Pairs shown fewer than ``min_impressions`` times are left out.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from indexer import UbiLog

from ._observe import Observations, PairCounts, observe
from ._spec import MODEL_NAMES, ClickModelSpec


@dataclass(frozen=True, slots=True)
class ClickJudgment:
    """One pair's judgment from clicks: its counts, the clicks expected, the score and the grade."""

    query: str
    doc_id: str
    impressions: int
    clicks: int
    expected: float
    score: float
    grade: int


@dataclass(frozen=True, slots=True)
class ClickJudgments:
    """A click model's judgments over one log, with what it was computed from."""

    spec: ClickModelSpec
    items: tuple[ClickJudgment, ...]
    prior: tuple[float, ...]
    searches: int
    too_few_impressions: int
    no_query_id: int = 0
    no_text: int = 0
    source: str = ""
    refined: int = 0
    """Search ids that carried several query texts, judged under their first (``REFINED_RULE``)."""
    later_texts: int = 0

    @property
    def queries(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(j.query for j in self.items))

    def by_query(self) -> dict[str, dict[str, ClickJudgment]]:
        out: dict[str, dict[str, ClickJudgment]] = {}
        for j in self.items:
            out.setdefault(j.query, {})[j.doc_id] = j
        return out


#: a model: (one pair's counts, the whole log's counts) -> the clicks expected of that pair
Expectation = Callable[[PairCounts, Observations], float]


def _coec(pair: PairCounts, seen: Observations) -> float:
    prior = seen.prior
    return sum(n * prior[rank - 1] for rank, n in pair.impressions_at.items())


def _ctr(pair: PairCounts, seen: Observations) -> float:
    return pair.impressions * seen.overall_ctr


CLICK_MODELS: Mapping[str, Expectation] = {"coec": _coec, "ctr": _ctr}
assert tuple(CLICK_MODELS) == MODEL_NAMES


def _judgment(pair: PairCounts, expected: float, cuts: tuple[float, ...]) -> ClickJudgment:
    score = pair.clicks / expected if expected > 0 else 0.0
    grade = bisect.bisect_right(cuts, score)
    return ClickJudgment(pair.query, pair.doc_id, pair.impressions, pair.clicks, expected, score, grade)


def judge_clicks(log: UbiLog, spec: ClickModelSpec) -> ClickJudgments:
    """The judgments ``spec``'s click model gives the pairs of ``log`` (query texts as the log has them)."""
    seen = observe(log, spec)
    expectation = CLICK_MODELS[spec.model]
    kept = [p for p in seen.pairs if p.impressions >= spec.min_impressions]
    items = sorted(
        (_judgment(p, expectation(p, seen), spec.cuts) for p in kept), key=lambda j: (j.query, j.doc_id)
    )
    return ClickJudgments(
        spec,
        tuple(items),
        seen.prior,
        seen.searches,
        too_few_impressions=len(seen.pairs) - len(kept),
        no_query_id=seen.no_query_id,
        no_text=seen.no_text,
        source=log.source,
        refined=seen.refined,
        later_texts=seen.later_texts,
    )
