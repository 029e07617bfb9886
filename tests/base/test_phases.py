"""Timing phases: what a run reports of where its time went (read by bench/first_run.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from base._phases import TIMING_LOG_ENV, phase, phase_totals, timed


def spent(name: str, before: dict[str, float]) -> float:
    return phase_totals().get(name, 0.0) - before.get(name, 0.0)


def test_an_inner_phase_pauses_the_outer_one_and_a_repeated_name_counts_once() -> None:
    before = phase_totals()
    with phase("t-outer"):
        time.sleep(0.05)
        with phase("t-inner"):
            time.sleep(0.1)
            with phase("t-outer"):  # already open: its time stays the inner one's
                time.sleep(0.05)
        time.sleep(0.05)
    outer, inner = spent("t-outer", before), spent("t-inner", before)
    assert 0.1 <= outer < 0.15, outer
    assert 0.15 <= inner < 0.2, inner


def test_timed_functions_add_up_and_the_log_gets_a_line_per_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "timing.jsonl"
    monkeypatch.setenv(TIMING_LOG_ENV, str(log))

    @timed("t-score")
    def score(x: int) -> int:
        time.sleep(0.02)
        return x * 2

    before = phase_totals()
    assert [score(i) for i in range(3)] == [0, 2, 4]
    assert spent("t-score", before) >= 0.06
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["phase"] for r in rows] == ["t-score"] * 3
    assert all(r["seconds"] >= 0.02 for r in rows)


def test_no_log_is_written_without_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TIMING_LOG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with phase("t-quiet"):
        pass
    assert list(tmp_path.iterdir()) == []


def test_start_up_is_the_time_since_the_process_began() -> None:
    """What `harness` records first: the interpreter and the imports before its command runs."""
    import psutil

    from base import record_startup

    before = phase_totals()
    record_startup()
    took = spent("start-up", before)
    assert 0 < took <= time.time() - psutil.Process().create_time()
