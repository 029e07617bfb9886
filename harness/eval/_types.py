"""Run and qrels shapes, and the one deterministic ranking order.

A run is ranx's shape, ``{qid: {docid: score}}``; qrels are ``{qid: {docid: grade}}``.
Every ranking this package produces or scores follows one order, trec_eval's: score
descending, then document id descending (trec_eval and pytrec_eval re-sort each query's results
so, whatever the rank column of a file says). :func:`rank`, :func:`sort_run` and :func:`top_k`
implement it, so nothing here depends on dict insertion order or on how a library happens to
break ties, and a TREC file the harness writes scores in trec_eval as in the harness.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from harness._errors import RunError

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]
RunLike = Mapping[str, Mapping[str, float]]
QrelsLike = Mapping[str, Mapping[str, int]]


def rank(results: Mapping[str, float], qid: str = "?") -> list[tuple[str, float]]:
    """One query's results as ``(docid, score)`` pairs: score desc, then doc id desc (trec_eval's order)."""
    for doc_id, score in results.items():
        if not isinstance(score, numbers.Real) or math.isnan(score):
            raise RunError(
                f"query {qid!r}: document {doc_id!r} has score {score!r}; expected a number, not NaN"
            )
    return sorted(
        ((d, float(s)) for d, s in results.items()), key=lambda item: (item[1], item[0]), reverse=True
    )


def sort_run(run: RunLike) -> Run:
    """A copy of ``run`` whose queries are in id order and whose results are ranked.

    Each query's dict iterates in rank order (score descending, then doc id
    descending), so ``list(sorted_run[qid])`` is the ranking.
    """
    return {qid: dict(rank(run[qid], qid)) for qid in sorted(run)}


def top_k(run: RunLike, k: int) -> Run:
    """The first ``k`` results of each query in rank order (see :func:`sort_run`)."""
    if k < 1:
        raise RunError(f"top_k needs k >= 1, got {k}")
    return {qid: dict(rank(run[qid], qid)[:k]) for qid in sorted(run)}


def rank_scores(results: Mapping[str, float], qid: str = "?", k: int | None = None) -> dict[str, float]:
    """Replace scores by strictly decreasing rank scores (n, n-1, ..., 1) in rank order.

    Order-only metrics and rank-based fusion give the same answer on this as on
    the original, and no library can reorder ties: there are none left.
    """
    ranked = rank(results, qid)
    if k is not None:
        ranked = ranked[:k]
    n = len(ranked)
    return {doc_id: float(n - i) for i, (doc_id, _) in enumerate(ranked)}


@contextmanager
def quiet_ranx() -> Iterator[None]:
    """Silence numba's warning about ranx hashing doc ids (uint64 -> int64); it is harmless here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="unsafe cast from uint64 to int64")
        yield
