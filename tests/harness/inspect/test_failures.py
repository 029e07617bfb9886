"""Worst queries from records.jsonl."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import RunError
from harness.inspect import worst_queries
from harness.results import EvalRecord, load_records
from tests.harness.inspect.synthetic import make_run_dir


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> list[EvalRecord]:
    return load_records(make_run_dir(tmp_path_factory.mktemp("fail") / "run")[0])


def test_worst_queries_are_ordered_and_filtered(records: list[EvalRecord]) -> None:
    worst = worst_queries(records, arm="hybrid", dataset="Biology", worst=5)
    assert len(worst) == 5
    assert all(r.arm == "hybrid" and r.dataset == "Biology" for r in worst)
    scores = [r.metrics.ndcg_at_10 for r in worst]
    assert scores == sorted(scores)
    pool = [r for r in records if r.arm == "hybrid" and r.dataset == "Biology"]
    assert scores[-1] <= sorted(r.metrics.ndcg_at_10 for r in pool)[5]
    assert len(worst_queries(records, worst=1000)) == len(records)


def test_filters_that_match_nothing_say_what_exists(records: list[EvalRecord]) -> None:
    with pytest.raises(
        RunError, match=r"no records with arm 'bm25': expected one of hybrid, lexical, vector"
    ):
        worst_queries(records, arm="bm25")
    with pytest.raises(RunError, match=r"expected --worst of at least 1, found 0"):
        worst_queries(records, worst=0)


def test_missing_records_file_is_a_clear_error(tmp_path: Path) -> None:
    run_dir, _ = make_run_dir(tmp_path / "run", with_records=False)
    with pytest.raises(RunError, match=r"holds no records.jsonl"):
        load_records(run_dir)
