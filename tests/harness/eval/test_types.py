"""The one ranking order, trec_eval's: score descending, then doc id descending."""

from __future__ import annotations

import pytest

from harness import RunError
from harness.eval import rank, sort_run, top_k


def test_sort_run_orders_queries_and_breaks_ties_by_doc_id():
    run = {"q2": {"b": 1.0, "a": 1.0, "c": 2.0}, "q1": {"z": 0.5, "y": 0.5}}
    out = sort_run(run)
    assert list(out) == ["q1", "q2"]
    assert list(out["q2"]) == ["c", "b", "a"]
    assert list(out["q1"]) == ["z", "y"]
    assert out["q2"] == run["q2"]  # scores untouched


def test_top_k_truncates_in_rank_order():
    run = {"q": {f"d{i}": float(i % 3) for i in range(10)}}
    top = top_k(run, 4)
    assert list(top["q"]) == ["d8", "d5", "d2", "d7"]
    assert top_k({"q": {}}, 3) == {"q": {}}
    with pytest.raises(RunError):
        top_k(run, 0)


def test_rank_rejects_nan_and_non_numbers():
    with pytest.raises(RunError, match="NaN"):
        rank({"a": float("nan")}, "q")
    with pytest.raises(RunError, match="expected a number"):
        rank({"a": "1.0"}, "q")  # type: ignore[dict-item]
