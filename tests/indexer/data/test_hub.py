"""``r2med/<Name>``: hub-layout folders (data dir and HF cache) load through the R2MED code path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer import DataError
from indexer.data import DATA_DIR_ENV, R2MED_NAMES, _hub, load_dataset, resolve_specs
from tests._support import R2MED_DEMO

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _hub_repo_copy(dest: Path) -> Path:
    """A folder laid out like the hub repository R2MED/Biology (the demo files at the repo root)."""
    shutil.copytree(R2MED_DEMO, dest)
    return dest


def test_data_dir_folder_loads_as_r2med_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _hub_repo_copy(tmp_path / "Biology")
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    ds = load_dataset("r2med/biology")
    direct = load_dataset(str(R2MED_DEMO))
    assert ds.name == "r2med/Biology"
    assert ds.source.startswith(str(tmp_path / "Biology"))
    assert ds.fingerprint == direct.fingerprint
    assert list(ds.expansions) == [("hyde", "qwen-7b")]


def test_hf_cache_snapshot_loads_without_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    repo = tmp_path / "cache" / "datasets--R2MED--Biology"
    _hub_repo_copy(repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT, encoding="utf-8")
    for revision in (None, COMMIT):
        ds = _hub.load("Biology", revision=revision, cache_dir=tmp_path / "cache")
        assert ds.source == f"hf://datasets/R2MED/Biology@{COMMIT}"
        assert ds.fingerprint == load_dataset(str(R2MED_DEMO)).fingerprint


def test_unavailable_dataset_says_which_files_to_place_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    with pytest.raises(DataError) as info:
        _hub.locate("PMC-Clinical", cache_dir=tmp_path / "empty-cache", download=False)
    text = str(info.value)
    assert "R2MED/PMC-Clinical" in text
    assert "place corpus.jsonl, query.jsonl and qrels.jsonl (or qrels.txt)" in text
    assert "$R2MED_DATA_DIR/PMC-Clinical" in text and "--dataset PATH" in text

    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "r2med"))
    with pytest.raises(DataError, match=r"under .*r2med/PMC-Clinical \(R2MED_DATA_DIR is set"):
        _hub.locate("PMC-Clinical", cache_dir=tmp_path / "empty-cache", download=False)


def test_resolve_specs_expands_r2med() -> None:
    assert resolve_specs("r2med") == [f"r2med/{name}" for name in R2MED_NAMES]
    assert len(R2MED_NAMES) == 8
    assert resolve_specs("sample, r2med/medqa-diag") == ["sample", "r2med/MedQA-Diag"]


def test_unknown_r2med_name_is_a_config_error() -> None:
    from indexer import ConfigError

    with pytest.raises(ConfigError, match='found "r2med/Cardiology"'):
        load_dataset("r2med/Cardiology")
