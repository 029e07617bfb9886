"""``harness datasets``: exit codes and output through ``harness.cli.main``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from tests._support import R2MED_DEMO


def test_validate_sample_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "validate", "sample"]) == 0
    out = capsys.readouterr().out
    assert "valid: sample" in out and "5,183 documents, 300 queries, 339 judgments" in out


def test_show_sample_json_reports_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "show", "sample", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["documents"], data["queries"], data["judgments"]) == (5183, 300, 339)
    assert data["split"] == "test" and data["grades"] == {"1": 339}


def test_show_train_split(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "show", "sample", "--split", "train", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["queries"] == 809


def test_validate_demo_reports_hyde_expansions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "validate", str(R2MED_DEMO)]) == 0
    out = capsys.readouterr().out
    assert "expansions: hyde/qwen-7b" in out
    assert "unknown-document" in out  # warnings are summarised


def test_show_demo_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "show", str(R2MED_DEMO)]) == 0
    out = capsys.readouterr().out
    assert "hyde/qwen-7b" in out and "avg document words" in out


def test_broken_third_corpus_line_fails_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "broken"
    shutil.copytree(R2MED_DEMO, folder)
    corpus = folder / "corpus.jsonl"
    corpus.chmod(0o644)
    with corpus.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "d3", "text": "unterminated\n')
    assert main(["datasets", "validate", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "corpus.jsonl:3: error: expected one JSON object per line, found malformed JSON" in err


def test_list_shows_sample_and_r2med(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["sample"]["cached"] is True and rows["sample"]["documents"] == 5183
    assert "r2med/PMC-Treatment" in rows
    assert main(["datasets", "list"]) == 0
    assert "r2med/Biology" in capsys.readouterr().out


def test_unknown_dataset_exits_with_config_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "validate", str(tmp_path / "missing")]) == 2
    assert "expected a dataset" in capsys.readouterr().err
