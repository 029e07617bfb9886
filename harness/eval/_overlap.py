"""How much two rankings agree, without judgments: overlap@k and rank-biased overlap.

Both compare what two arms (production and candidate, say) return for the same queries, so a
change can be seen before anyone judges its results.

* **overlap@k** is the Jaccard similarity of the two top-k document sets,
  ``|A_k ∩ B_k| / |A_k ∪ B_k|``: 1 when the same documents come back in any order, 0 when none is
  shared. A ranking shorter than k contributes what it has.
* **RBO** is rank-biased overlap (Webber, Moffat & Zobel, "A similarity measure for indefinite
  rankings", ACM TOIS 28(4), 2010), top-weighted by its persistence ``p`` (0.9 here: the first 10
  ranks carry about 86% of the weight). We report **RBO_ext**, the paper's point estimate for
  finite lists (its equation 32), which also handles lists of uneven length: the shorter list
  ``S`` (length s) and the longer ``L`` (length l), with ``X_d`` the number of documents the two
  prefixes of depth d share (``S`` contributing all its s items past depth s), give::

      RBO_ext = (1-p)/p * ( sum_{d=1..l} X_d/d * p^d + sum_{d=s+1..l} X_s (d-s)/(s d) * p^d )
                + ( (X_l - X_s)/l + X_s/s ) * p^l

  It assumes that agreement seen so far continues past the end of the lists. Identical lists
  score 1, lists with nothing in common 0, and it is symmetric. It is neither the lower bound
  RBO_min nor the residual-free RBO@depth sum alone.

Rankings are a run's order (:func:`harness.eval.rank`: score descending, then doc id descending),
the order the TREC files are written in. Two empty rankings are taken as identical (1 on both
measures: nothing moved); an empty ranking against a non-empty one scores 0. Over runs, the mean
is over the queries that at least one of the two arms returned anything for (a query present in
one run only counts with the empty ranking for the other); queries neither returned are left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from base import ConfigError, timed
from harness._errors import RunError

from ._types import RunLike, rank

OVERLAP_K = 10
RBO_P = 0.9
RBO_VARIANT = "rbo_ext"


def _check(ranking: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for doc in ranking:
        if doc in seen:
            raise RunError(f"{what}: expected each document once in a ranking, found {doc!r} twice")
        seen.add(doc)


def overlap_at_k(a: Sequence[str], b: Sequence[str], k: int = OVERLAP_K) -> float:
    """Jaccard similarity of the top-``k`` sets of two rankings (best first); 1 when both are empty."""
    if k < 1:
        raise ConfigError(f"overlap@k needs k >= 1, got {k}")
    top_a, top_b = set(a[:k]), set(b[:k])
    union = top_a | top_b
    return len(top_a & top_b) / len(union) if union else 1.0


def rbo(a: Sequence[str], b: Sequence[str], p: float = RBO_P, *, where: str = "") -> float:
    """RBO_ext (Webber et al. 2010, eq. 32) of two rankings (best first), possibly of uneven length.

    1 for identical rankings (and for two empty ones), 0 when nothing is shared; symmetric.
    """
    if not 0.0 < p < 1.0:
        raise ConfigError(f"RBO needs a persistence p in (0, 1), got {p}")
    _check(a, f"{where}: first ranking" if where else "first ranking")
    _check(b, f"{where}: second ranking" if where else "second ranking")
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long_)  # noqa: E741  (the paper's names)
    if s == 0:
        return 1.0 if l == 0 else 0.0
    seen_short: set[str] = set()
    seen_long: set[str] = set()
    shared = 0  # X_d
    x_s = 0
    total = 0.0
    for d in range(1, l + 1):
        if d <= s:
            doc = short[d - 1]
            shared += doc in seen_long
            seen_short.add(doc)
        doc = long_[d - 1]
        shared += doc in seen_short
        seen_long.add(doc)
        if d == s:
            x_s = shared
        total += shared / d * p**d
        if d > s:
            total += x_s * (d - s) / (s * d) * p**d
    value = (1 - p) / p * total + ((shared - x_s) / l + x_s / s) * p**l
    return min(1.0, max(0.0, value))  # float rounding only: the estimate lies in [0, 1]


@dataclass(frozen=True)
class QueryOverlap:
    """overlap@k and RBO of two arms on one query."""

    qid: str
    overlap: float
    rbo: float


@dataclass(frozen=True)
class Overlap:
    """How much two arms agree on one dataset, without judgments: means over the compared queries.

    ``overlap`` is the mean overlap@k (Jaccard of the top-k sets), ``rbo`` the mean RBO_ext at
    persistence ``p``; ``changed`` counts the queries whose top-k set is not the same.
    """

    dataset: str
    arm_a: str
    arm_b: str
    k: int
    p: float
    queries: int
    overlap: float
    rbo: float
    changed: int = 0
    variant: str = RBO_VARIANT

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: each query's document ids, best first
Rankings = Mapping[str, Sequence[str]]


def rankings(run: RunLike) -> dict[str, list[str]]:
    """Each query's document ids in the run's order: score descending, then doc id descending."""
    return {qid: [doc for doc, _ in rank(run[qid], qid)] for qid in run}


def query_overlaps(a: Rankings, b: Rankings, *, k: int = OVERLAP_K, p: float = RBO_P) -> list[QueryOverlap]:
    """Per query (in id order): overlap@k and RBO of two sets of rankings ``{qid: [docid, ...]}``.

    Queries that neither side returned anything for are left out; a query one side lacks counts
    with an empty ranking there.
    """
    out = []
    for qid in sorted(set(a) | set(b)):
        first, second = a.get(qid) or (), b.get(qid) or ()
        if first or second:
            where = f"query {qid!r}"
            out.append(QueryOverlap(qid, overlap_at_k(first, second, k), rbo(first, second, p, where=where)))
    return out


def run_overlaps(
    run_a: RunLike, run_b: RunLike, *, k: int = OVERLAP_K, p: float = RBO_P
) -> list[QueryOverlap]:
    """:func:`query_overlaps` of two runs ``{qid: {docid: score}}``, each ranked by :func:`rankings`."""
    return query_overlaps(rankings(run_a), rankings(run_b), k=k, p=p)


def summarize(
    dataset: str,
    arm_a: str,
    arm_b: str,
    rows: Sequence[QueryOverlap],
    *,
    k: int = OVERLAP_K,
    p: float = RBO_P,
) -> Overlap:
    """The means of per-query rows (6 decimals; 0 queries give 0 means)."""
    n = len(rows)

    def mean(values: list[float]) -> float:
        return round(math.fsum(values) / n, 6) if n else 0.0

    return Overlap(
        dataset=dataset,
        arm_a=arm_a,
        arm_b=arm_b,
        k=k,
        p=p,
        queries=n,
        overlap=mean([r.overlap for r in rows]),
        rbo=mean([r.rbo for r in rows]),
        changed=sum(r.overlap < 1.0 for r in rows),
    )


@timed("score")
def compare_overlap(
    ranked: Mapping[str, Mapping[str, Rankings]],
    pairs: Sequence[tuple[str, str]],
    *,
    k: int = OVERLAP_K,
    p: float = RBO_P,
) -> list[tuple[Overlap, list[QueryOverlap]]]:
    """Every pair ``(a, b)`` on every dataset of ``ranked[dataset][arm]`` (rankings) that holds both arms."""
    out = []
    for dataset in sorted(ranked):
        arms = ranked[dataset]
        for arm_a, arm_b in pairs:
            if arm_a in arms and arm_b in arms:
                rows = query_overlaps(arms[arm_a], arms[arm_b], k=k, p=p)
                out.append((summarize(dataset, arm_a, arm_b, rows, k=k, p=p), rows))
    return out
