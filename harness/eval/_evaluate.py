"""Score a run against qrels with ranx, with explicit rules for the edge cases.

Rules (they hold whatever ranx would do on its own), trec_eval's unless said otherwise:

* Every judged query counts (trec_eval's ``-c``, the default): a query in the qrels with no results
  (absent from the run, or an empty result) scores 0 on every measure and stays in the mean. It is listed
  in :attr:`Evaluation.empty_qids`. With ``complete=False`` the mean is over the judged queries that
  returned results, as trec_eval without ``-c`` (and R2MED's code, through pytrec_eval).
* Queries in the run without any judgment are ignored for the means and listed
  in :attr:`Evaluation.unjudged_qids`.
* Binary measures count a grade >= the relevance level (``relevance_level``, trec_eval's ``-l``, 1 by
  default) as relevant; nDCG uses the grade itself as gain at any level (Järvelin's linear gain, like
  trec_eval's ``ndcg_cut``, which ``-l`` leaves alone). A grade-0 judgment counts as *judged*.
* A negative grade (TREC Web's -2 junk, trec_eval's own -1) is read as trec_eval reads it: never
  relevant, and "in the pool but not judged", so Unjudged@k counts it and judged-only nDCG drops it.
* Ties are broken by score descending, then doc id descending: the order trec_eval (and pytrec_eval)
  re-sort every query's results into, whatever the file's rank column says. ranx sorts ties
  by an argsort whose outcome depends on dict insertion order and on the input
  path (measured with ranx 0.3.21: two tied docs come out in reverse insertion
  order from a plain dict, in insertion order from ``ranx.Run``; 30 tied docs
  give MRR 0.5 one way and 0.034 the other). So before ranx sees a run each query is
  ranked by :func:`harness.eval.sort_run`'s order, cut to the deepest cutoff,
  and its scores replaced by strictly decreasing rank scores: no ties remain,
  and order-only measures are unchanged by construction.
* Unjudged@k is trec_eval's ``unj``: divided by k even when fewer than k results came back.
* Bpref is trec_eval's, computed here (ranx's divides by zero when a query has no judged non-relevant).
* nDCG_judged@k (judged-only, or condensed, nDCG; Sakai 2007; trec_eval's ``-J``) is computed here,
  not by ranx: every document without a judgment (a grade of 0 or more) is
  removed from the *whole* ranking, then nDCG@k is taken over what is left,
  with the same linear gains and ideal ranking as nDCG. It equals ir_measures'
  ``nDCG(judged_only=True)@k`` (pytrec_eval).
* ERR@k (expected reciprocal rank; Chapelle, Metzler, Zhang and Grinspan 2009) is computed
  here too (ranx has none): ``sum over r <= k of R_r / r * prod over i < r of (1 - R_i)``, with
  the stopping probability ``R = (2^g - 1) / 2^g_max``. ``g_max`` is the scale's top grade:
  ``max_grade`` when the caller declares the scale (e.g. 3 for a 0-3 judge, 4 for gdeval's,
  which ir_measures' ``ERR@k`` uses), else the highest grade in the qrels (all queries).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from numbers import Integral

from base import DataError, timed
from harness._errors import RunError

from ._measures import DEFAULT_MEASURES, Measure, parse_measures
from ._ranx import ranx as ranx_module
from ._types import Qrels, QrelsLike, RunLike, quiet_ranx, rank


@dataclass(frozen=True)
class Evaluation:
    """Per-query and mean scores of one run.

    ``per_query[measure.key][qid]`` holds every judged query; ``means[measure.key]``
    is their plain average.
    """

    measures: tuple[Measure, ...]
    per_query: dict[str, dict[str, float]]
    means: dict[str, float]
    qids: tuple[str, ...]
    """Judged queries, in id order: the denominator of every mean."""
    empty_qids: tuple[str, ...] = ()
    """Judged queries without any result (scored 0)."""
    unjudged_qids: tuple[str, ...] = field(default=())
    """Queries in the run without judgments (ignored)."""

    def mean(self, measure: Measure | str) -> float:
        return self.means[Measure.parse(measure).key]

    def scores(self, measure: Measure | str) -> dict[str, float]:
        return self.per_query[Measure.parse(measure).key]

    def per_query_rows(self) -> list[dict[str, float | str]]:
        """One row per judged query: ``{"qid": ..., "ndcg@10": ..., ...}`` (for JSONL)."""
        return [
            {"qid": qid, **{m.key: self.per_query[m.key][qid] for m in self.measures}} for qid in self.qids
        ]


def check_qrels(qrels: QrelsLike) -> Qrels:
    """Qrels with integer grades, or a :class:`DataError` naming what is wrong."""
    if not qrels:
        raise DataError("qrels are empty: expected at least one judged query")
    out: Qrels = {}
    problems: list[str] = []
    for qid, judgments in qrels.items():
        clean: dict[str, int] = {}
        for doc_id, grade in judgments.items():
            if isinstance(grade, bool) or not isinstance(grade, Integral | float) or grade != int(grade):
                problems.append(f"query {qid!r} document {doc_id!r}: grade {grade!r} is not an integer")
                continue
            clean[doc_id] = int(grade)
        if clean:
            out[qid] = clean
    if problems:
        raise DataError(f"{len(problems)} bad judgment(s): {'; '.join(problems[:5])}", problems)
    if not out:
        raise DataError("qrels hold no judgments: every query has an empty judgment list")
    return out


def _unjudged(ranked_docs: list[str], judged: Mapping[str, int], k: int | None, level: int) -> float:
    """trec_eval's ``unj``: documents without a judgment, or with a negative one (in the pool, not judged),
    among the top k, divided by k however few came back."""
    top = ranked_docs[:k]
    if not top:
        return 0.0
    found = sum(judged.get(doc_id, -1) < 0 for doc_id in top)
    return found / (k if k is not None else len(top))


def _dcg(gains: Iterable[float]) -> float:
    return math.fsum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)


def _ndcg_judged(ranked_docs: list[str], judged: Mapping[str, int], k: int | None, level: int) -> float:
    """nDCG@k over the condensed ranking: documents without a judgment, or with a negative one, removed
    (from the whole ranking) first, as trec_eval's ``-J`` does."""
    ideal = _dcg(sorted((g for g in judged.values() if g > 0), reverse=True)[:k])
    if ideal == 0.0:
        return 0.0
    condensed = [judged[d] for d in ranked_docs if judged.get(d, -1) >= 0][:k]
    return _dcg(float(g) for g in condensed) / ideal


def err(ranked_docs: list[str], judged: Mapping[str, int], k: int | None, max_grade: int) -> float:
    """ERR@k of one ranking: the expected reciprocal of the rank at which a cascade user stops."""
    score, reach = 0.0, 1.0
    for position, doc_id in enumerate(ranked_docs[:k], 1):
        grade = max(judged.get(doc_id, 0), 0)
        stop = (2.0**grade - 1.0) / 2.0**max_grade
        score += reach * stop / position
        reach *= 1.0 - stop
    return score


def bpref(ranked_docs: list[str], judged: Mapping[str, int], k: int | None, level: int) -> float:
    """trec_eval's bpref: for each relevant document retrieved, 1 - (judged non-relevant ranked above it,
    at most R) / min(R, N); summed, over R. Relevant: grade >= level; judged non-relevant: 0 <= grade < level;
    a negative grade is neither. (ranx divides by min(R, N) even when N is 0: NaN where trec_eval says 1.)"""
    relevant = sum(g >= level for g in judged.values())
    if relevant == 0:
        return 0.0
    nonrel_total = sum(0 <= g < level for g in judged.values())
    score, nonrel_above = 0.0, 0
    for doc_id in ranked_docs[:k]:
        grade = judged.get(doc_id)
        if grade is None or grade < 0:
            continue
        if grade < level:
            nonrel_above += 1
        elif nonrel_above > 0:
            score += 1.0 - min(nonrel_above, relevant) / min(nonrel_total, relevant)
        else:
            score += 1.0
    return score / relevant


def grade_scale(qrels: Qrels, max_grade: int | None) -> int:
    """The top grade ERR's stopping probabilities are relative to: declared, or the qrels' highest (>= 1)."""
    top = max((g for docs in qrels.values() for g in docs.values()), default=0)
    if max_grade is None:
        return max(top, 1)
    if max_grade < 1 or top > max_grade:
        raise DataError(
            f"expected grades on a 0..{max_grade} scale (declared), found grade {top} in the qrels"
        )
    return max_grade


Ours = Callable[[list[str], Mapping[str, int], int | None, int], float]


def _ours(max_grade: int) -> dict[str, Ours]:
    """Families computed here: (full ranking in rank order, the query's judgments, cutoff, level) -> score."""
    return {
        "Unjudged": _unjudged,
        "nDCG_judged": _ndcg_judged,
        "ERR": lambda docs, judged, k, level: err(docs, judged, k, max_grade),
        "Bpref": bpref,
    }


_COMPANION = "hits@1"


@timed("score")
def evaluate(
    qrels: QrelsLike,
    run: RunLike,
    measures: Iterable[Measure | str] | str = DEFAULT_MEASURES,
    *,
    max_grade: int | None = None,
    relevance_level: int = 1,
    complete: bool = True,
) -> Evaluation:
    """Score ``run`` against ``qrels`` on ``measures`` (default :data:`DEFAULT_MEASURES`).

    ``max_grade``: the top of the judgments' scale, where it is declared (ERR's stopping
    probabilities are relative to it); by default the highest grade in the qrels.
    ``relevance_level``: the lowest grade a binary measure (P, Recall, MAP, MRR, Bpref, Success) counts as
    relevant, trec_eval's ``-l`` (a measure's own ``rel=`` wins); nDCG's gains are the grades at any level.
    ``complete``: trec_eval's ``-c`` (the default): a judged query without results scores 0 and counts in
    the mean; ``False`` averages over the judged queries that returned results, as trec_eval without ``-c``.
    """
    wanted = parse_measures(measures if isinstance(measures, str) else tuple(measures))
    if relevance_level < 1:
        raise DataError(f"expected a relevance level of 1 or more, found {relevance_level}")
    judged = check_qrels(qrels)
    judged_qids = tuple(sorted(judged))
    cutoffs = [m.cutoff for m in wanted]
    depth = None if None in cutoffs else max(c for c in cutoffs if c is not None)

    full: dict[str, list[str]] = {}  # the whole ranking: judged-only measures look past the cutoff
    for qid in judged_qids:
        results = run.get(qid) or {}
        full[qid] = [doc_id for doc_id, _ in rank(results, qid)]
    ranked = {qid: docs[:depth] for qid, docs in full.items()}
    scored = tuple(q for q in judged_qids if ranked[q])
    empty = tuple(q for q in judged_qids if not ranked[q])
    qids = judged_qids if complete else scored
    if not qids:
        raise RunError(
            f"expected results for at least one of the {len(judged_qids)} judged queries, found none "
            "(scored without trec_eval's -c, a mean needs one)"
        )

    per_query: dict[str, dict[str, float]] = {m.key: dict.fromkeys(qids, 0.0) for m in wanted}
    if scored:
        _ranx_scores(judged, ranked, scored, wanted, relevance_level, per_query)
    computed_here = _ours(grade_scale(judged, max_grade))
    for m in wanted:
        ours = computed_here.get(m.name)
        if ours is not None:
            for qid in qids:
                per_query[m.key][qid] = ours(full[qid], judged[qid], m.cutoff, m.level(relevance_level))

    for key, scores in per_query.items():
        bad = [q for q, v in scores.items() if not math.isfinite(v)]
        if bad:
            raise RunError(f"{key} is not finite for {len(bad)} queries, e.g. {bad[:5]}")
    means = {m.key: math.fsum(per_query[m.key].values()) / len(qids) for m in wanted}
    return Evaluation(
        measures=wanted,
        per_query=per_query,
        means=means,
        qids=qids,
        empty_qids=empty if complete else (),
        unjudged_qids=tuple(sorted(q for q in run if q not in judged)),
    )


def _ranx_scores(
    judged: Qrels,
    ranked: Mapping[str, list[str]],
    scored: tuple[str, ...],
    wanted: tuple[Measure, ...],
    level: int,
    per_query: dict[str, dict[str, float]],
) -> None:
    """Fill ``per_query`` with what ranx computes, for the queries that returned results."""
    ranx = ranx_module()  # heavy (numba); imported on first use

    names = {m: m.ranx_name(level) for m in wanted if m.ranx_name(level) is not None}
    if not names:
        return
    # Same key order in both dicts: ranx pairs queries by position.
    rx_qrels = {q: dict(judged[q]) for q in scored}
    rx_run = {q: _order(ranked[q]) for q in scored}
    asked = list(dict.fromkeys(str(n) for n in names.values()))
    if len(asked) == 1:
        # ranx 0.3 fails on one metric with return_mean=False (KeyError on the
        # bare metric name), so ask for a second, cheap one and ignore it.
        asked.append(_COMPANION if asked[0] != _COMPANION else "hits@2")
    try:
        with quiet_ranx():
            raw = ranx.evaluate(rx_qrels, rx_run, asked, return_mean=False, save_results_in_run=False)
    except Exception as err:  # ranx raises AssertionError/ValueError/numba errors
        raise RunError(f"ranx could not evaluate the run on {len(scored)} queries") from err
    for m, name in names.items():
        values = raw[name]
        for i, qid in enumerate(scored):
            if qid in per_query[m.key]:
                per_query[m.key][qid] = float(values[i])


def _order(docs: list[str]) -> dict[str, float]:
    """Strictly decreasing scores for docs already in rank order."""
    n = len(docs)
    return {doc_id: float(n - i) for i, doc_id in enumerate(docs)}
