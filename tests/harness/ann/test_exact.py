"""Exact top-k, tie-aware recall and the frontier: pure functions, checked against plain sorting."""

from __future__ import annotations

import numpy as np

from harness.ann import DocumentVectors, ann_recall, exact_top_k, mark_frontier
from harness.results import AnnPoint, Distribution


def _unit(rows: int, dims: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_exact_top_k_equals_a_full_sort_across_chunks(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import harness.ann._exact as exact

    monkeypatch.setattr(exact, "DOC_CHUNK", 37)  # many chunks, so the running merge is exercised
    docs, queries = _unit(500, 16, 1), _unit(9, 16, 2)
    found = exact_top_k(queries, docs, 12)
    full = np.argsort(-(queries @ docs.T), axis=1)[:, :12]
    assert (found.rows == full).all()
    assert np.allclose(found.scores, np.take_along_axis(queries @ docs.T, full, axis=1))


def test_recall_counts_true_neighbours_and_ties() -> None:
    docs = DocumentVectors(
        ("a", "b", "c", "d"), np.array([[1, 0], [0.8, 0.6], [0.8, 0.6], [0, 1]], dtype=np.float32)
    )
    query = np.array([[1.0, 0.0]], dtype=np.float32)
    # exact top 2: a (1.0), then b and c tie (0.8): either is a correct second neighbour
    perfect = ann_recall({"q": {"a": 2.0, "c": 1.0}}, ["q"], query, docs, (2,))
    assert perfect.at(2) == 1.0
    half = ann_recall({"q": {"a": 2.0, "d": 1.0}}, ["q"], query, docs, (2,))
    assert half.at(2) == 0.5 and half.per_query["recall@2"]["q"] == 0.5
    empty = ann_recall({}, ["q"], query, docs, (1,))
    assert empty.at(1) == 0.0


def _point(p50: float, recall: float) -> AnnPoint:
    return AnnPoint("hnsw", 10, recall, 0.5, Distribution(p50=p50), Distribution(p50=p50), 1.0, 1, "i")


def test_frontier_keeps_only_points_nothing_beats() -> None:
    points = [_point(1.0, 0.8), _point(2.0, 0.7), _point(2.0, 0.9), _point(3.0, 0.9), _point(4.0, 1.0)]
    assert [p.frontier for p in mark_frontier(points)] == [True, False, True, False, True]
