"""Timing phases: what a run reports of where its time went (read by bench/first_run.py), through the
timing log users turn on with ``R2MED_TIMING_LOG=FILE`` (docs/run-directory.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from base import phase, record_startup, timed

#: the variable as users set it (docs/run-directory.md)
TIMING_LOG = "R2MED_TIMING_LOG"


@pytest.fixture()
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "timing.jsonl"
    monkeypatch.setenv(TIMING_LOG, str(path))
    return path


def rows(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def spent(log: Path, name: str) -> float:
    return sum(float(r["seconds"]) for r in rows(log) if r["phase"] == name)  # type: ignore[arg-type]


def test_an_inner_phase_pauses_the_outer_one_and_a_repeated_name_counts_once(log: Path) -> None:
    marks = [time.perf_counter()]  # the edges of the segments, as this test sees them

    def mark() -> None:
        marks.append(time.perf_counter())

    with phase("t-outer"):
        time.sleep(0.05)
        mark()
        with phase("t-inner"):
            time.sleep(0.1)
            with phase("t-outer"):  # already open: its time stays the inner one's
                time.sleep(0.05)
            mark()
        time.sleep(0.05)
        mark()
    assert [r["phase"] for r in rows(log)] == ["t-inner", "t-outer"]
    outer_only = (marks[1] - marks[0]) + (marks[3] - marks[2])
    inner = marks[2] - marks[1]
    # what each phase reports is the time of its own segments, whatever the machine's load made of them
    assert spent(log, "t-outer") == pytest.approx(outer_only, abs=0.01)
    assert spent(log, "t-inner") == pytest.approx(inner, abs=0.01)
    assert inner >= 0.15 and outer_only >= 0.1


def test_timed_functions_add_up_and_the_log_gets_a_line_per_phase(log: Path) -> None:
    @timed("t-score")
    def score(x: int) -> int:
        time.sleep(0.02)
        return x * 2

    assert [score(i) for i in range(3)] == [0, 2, 4]
    assert spent(log, "t-score") >= 0.06
    assert [r["phase"] for r in rows(log)] == ["t-score"] * 3
    assert all(float(r["seconds"]) >= 0.02 for r in rows(log))  # type: ignore[arg-type]


def test_no_log_is_written_without_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TIMING_LOG, raising=False)
    monkeypatch.chdir(tmp_path)
    with phase("t-quiet"):
        pass
    assert list(tmp_path.iterdir()) == []


def test_start_up_is_the_time_since_the_process_began(log: Path) -> None:
    """What `harness` records first: the interpreter and the imports before its command runs."""
    import psutil

    record_startup()
    took = spent(log, "start-up")
    assert 0 < took <= time.time() - psutil.Process().create_time()
