"""``harness report`` and ``harness failures`` on a synthetic run directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from tests.harness.inspect.synthetic import make_run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("cli") / "run")[0]


def test_report_prints_tables(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "Biology" in out and "sample" in out and "†hybrid" in out and "base retriever/nv-embed-v2" in out
    assert "0.1920" in out  # the paper's BM25 row


def test_report_html_writes_one_file(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "r.html"
    assert main(["report", str(run_dir), "--html", "--output", str(target)]) == 0
    assert target.read_text().startswith("<!DOCTYPE html>") and str(target) in capsys.readouterr().out
    implied = tmp_path / "implied.html"
    assert main(["report", str(run_dir), "-o", str(implied)]) == 0, "--output implies --html"
    assert implied.read_bytes() == target.read_bytes()


def test_failures_lists_worst_queries_with_missed_docs(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["failures", str(run_dir), "--arm", "hybrid", "--worst", "3", "--dataset", "Biology"]) == 0
    out = capsys.readouterr().out
    assert out.count("Biology · hybrid ·") == 3 and "missed doc" in out


def test_errors_are_clear(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["failures", str(run_dir), "--arm", "nope"]) == 1
    assert "expected one of hybrid, lexical, vector" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 1
    assert "is not a finished run directory: expected results.json in it" in capsys.readouterr().err
