"""How far click judgments agree with human ones, on the pairs both cover.

Each pair the click model judged is matched to the reference grade of the same query and document
(a pair the reference lacks counts as grade 0, as scoring counts an unjudged document, unless
``unjudged="skip"``). Reported: Cohen's kappa on relevant / not relevant (grade > 0) with its
bootstrap interval and confusion matrix, linearly weighted kappa where either side is graded,
and Kendall's tau-b between the click score (threshold-free) and the reference grade (``pair_tau``;
with binary references it cannot reach 1: its ceiling falls with the share of relevant pairs).

Given runs (systems), also the agreement that decides between them: each run scored (nDCG@10 by
default) on the queries both sides judge, once under the reference and once under the click
grades, and the two orderings of the runs compared by Kendall's tau and Spearman's rho.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from base import ConfigError
from harness.eval import (
    PRIMARY_MEASURE,
    Confusion,
    Kappa,
    Measure,
    cohen_kappa,
    confusion,
    evaluate,
    kendall_tau,
    spearman_rho,
)

from ._models import ClickJudgments

UNJUDGED = ("zero", "skip")


Runs = Mapping[str, Mapping[str, Mapping[str, float]]]
Qrels = Mapping[str, Mapping[str, int]]


@dataclass(frozen=True, slots=True)
class SystemAgreement:
    """Runs ordered by one measure under the reference and under the click grades."""

    measure: str
    queries: int
    reference: dict[str, float]
    clicks: dict[str, float]
    tau: float
    rho: float

    def to_dict(self) -> dict[str, object]:
        return {
            "measure": self.measure,
            "queries": self.queries,
            "reference": self.reference,
            "clicks": self.clicks,
            "tau": self.tau,
            "rho": self.rho,
        }


@dataclass(frozen=True, slots=True)
class ClickAgreement:
    model: str
    pairs: int
    unjudged: int
    kappa: Kappa
    confusion: Confusion
    pair_tau: float
    weighted: Kappa | None = None
    systems: SystemAgreement | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "pairs": self.pairs,
            "unjudged_pairs": self.unjudged,
            "kappa": self.kappa.to_dict(),
            "confusion": self.confusion.to_dict(),
            "pair_tau": self.pair_tau,
            "weighted_kappa": self.weighted.to_dict() if self.weighted else None,
            "systems": self.systems.to_dict() if self.systems else None,
        }


def _ties(values: np.ndarray) -> float:
    _, counts = np.unique(values, return_counts=True)
    return float((counts * (counts - 1) / 2).sum())


def graded_tau(scores: Sequence[float], grades: Sequence[int]) -> float:
    """Kendall's tau-b of scores against a few grades, in O(n log n) (pairs of grades, not of items)."""
    x, y = np.asarray(scores, dtype=np.float64), np.asarray(grades, dtype=np.int64)
    if len(x) != len(y) or len(x) < 2:
        raise ConfigError(f"expected two or more scored items with a grade each, found {len(x)} and {len(y)}")
    groups = [np.sort(x[y == g]) for g in np.unique(y)]
    net = 0.0
    for i, low in enumerate(groups):
        for high in groups[i + 1 :]:  # every pair across two grades: higher score on the higher grade?
            above = np.searchsorted(low, high, side="left").sum()
            below = (len(low) - np.searchsorted(low, high, side="right")).sum()
            net += float(above - below)
    n0 = len(x) * (len(x) - 1) / 2
    denominator = float(np.sqrt((n0 - _ties(x)) * (n0 - _ties(y))))
    return net / denominator if denominator else 0.0


def _matched(
    judgments: ClickJudgments, reference: Qrels, ids: Mapping[str, str], unjudged: str
) -> tuple[list[float], list[int], list[int], int]:
    """Scores, click grades and reference grades of the pairs both cover; and how many the reference lacks."""
    scores, ours, theirs, missing = [], [], [], 0
    for j in judgments.items:
        qid = ids.get(j.query)
        grade = reference.get(qid, {}).get(j.doc_id) if qid is not None else None
        missing += grade is None
        if grade is None and (qid is None or qid not in reference or unjudged == "skip"):
            continue
        scores.append(j.score)
        ours.append(j.grade)
        theirs.append(grade or 0)
    return scores, ours, theirs, missing


def click_qrels(judgments: ClickJudgments, ids: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """The click grades by query id (queries without an id left out)."""
    out: dict[str, dict[str, int]] = {}
    for j in judgments.items:
        if j.query in ids:
            out.setdefault(ids[j.query], {})[j.doc_id] = j.grade
    return out


def system_agreement(
    runs: Runs, reference: Qrels, clicks: Qrels, measure: str | Measure = PRIMARY_MEASURE
) -> SystemAgreement:
    """The runs scored on the queries both label sets judge, under each, and the two orderings compared."""
    if len(runs) < 2:
        raise ConfigError(f"expected two or more runs to order, found {len(runs)}")
    shared = sorted(set(reference) & set(clicks))
    if not shared:
        raise ConfigError("expected queries judged both by the reference and by clicks, found none")
    m = Measure.parse(measure)
    theirs = {q: dict(reference[q]) for q in shared}
    ours = {q: dict(clicks[q]) for q in shared}
    by_ref = {name: evaluate(theirs, run, [m]).mean(m) for name, run in runs.items()}
    by_clicks = {name: evaluate(ours, run, [m]).mean(m) for name, run in runs.items()}
    a, b = list(by_ref.values()), [by_clicks[name] for name in by_ref]
    return SystemAgreement(str(m), len(shared), by_ref, by_clicks, kendall_tau(a, b), spearman_rho(a, b))


def agreement(
    judgments: ClickJudgments,
    reference: Qrels,
    ids: Mapping[str, str],
    *,
    unjudged: str = "zero",
    runs: Runs | None = None,
    measure: str | Measure = PRIMARY_MEASURE,
) -> ClickAgreement:
    """Agreement of ``judgments`` with ``reference`` qrels (query texts mapped to ids by ``ids``), and,
    given ``runs``, of the orderings of those runs by ``measure``."""
    if unjudged not in UNJUDGED:
        raise ConfigError(f"expected unjudged pairs to count as {' or '.join(UNJUDGED)}, found {unjudged!r}")
    scores, ours, theirs, missing = _matched(judgments, reference, ids, unjudged)
    if len(scores) < 2:
        raise ConfigError(f"expected two or more judged pairs shared with the reference, found {len(scores)}")
    binary = ([int(g > 0) for g in ours], [int(g > 0) for g in theirs])
    graded = max(ours) > 1 or max(theirs) > 1
    systems = system_agreement(runs, reference, click_qrels(judgments, ids), measure) if runs else None
    return ClickAgreement(
        model=judgments.spec.model,
        pairs=len(scores),
        unjudged=missing,
        kappa=cohen_kappa(*binary, labels=(0, 1)),
        confusion=confusion(*binary, labels=(0, 1)),
        pair_tau=graded_tau(scores, theirs),
        weighted=cohen_kappa(ours, theirs, weights="linear") if graded else None,
        systems=systems,
    )
