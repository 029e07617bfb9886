"""``r2med/<Name>``: hub-layout folders (data dir and HF cache) load through the R2MED code path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from base import DataError
from indexer.data import DATA_DIR_ENV, PINNED_REVISIONS, R2MED_NAMES, _hub, load_dataset, resolve_specs
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


def _cache_with_snapshot(cache: Path, commit: str, ref: str | None = None) -> Path:
    """A Hugging Face cache holding R2MED/Biology at ``commit`` (and ``refs/<ref>`` pointing at it)."""
    repo = cache / "datasets--R2MED--Biology"
    _hub_repo_copy(repo / "snapshots" / commit)
    if ref is not None:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit, encoding="utf-8")
    return cache


def test_pinned_revisions_are_the_issue_16_commits() -> None:
    assert set(PINNED_REVISIONS) == set(R2MED_NAMES)
    assert PINNED_REVISIONS["Biology"] == "8b9fec2db9eda4b5742d03732213fbaee8169556"
    assert PINNED_REVISIONS["IIYi-Clinical"] == "974abbc9bc281c3169180a6aa5d7586cfd2f5877"
    assert all(len(c) == 40 and int(c, 16) >= 0 for c in PINNED_REVISIONS.values())


def test_pinned_snapshot_loads_by_default_and_says_its_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    pinned = PINNED_REVISIONS["Biology"]
    cache = _cache_with_snapshot(tmp_path / "cache", pinned)
    ds = _hub.load("Biology", cache_dir=cache)
    assert ds.revision == pinned
    assert ds.source == f"hf://datasets/R2MED/Biology@{pinned}"
    assert ds.fingerprint == load_dataset(str(R2MED_DEMO)).fingerprint


def test_revision_main_or_a_commit_still_overrides_the_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    cache = _cache_with_snapshot(tmp_path / "cache", COMMIT, ref="main")
    for revision in ("main", COMMIT):
        ds = _hub.load("Biology", revision=revision, cache_dir=cache)
        assert ds.revision == COMMIT
        assert ds.source == f"hf://datasets/R2MED/Biology@{COMMIT}"


def test_a_snapshot_at_another_commit_is_not_used_for_the_pinned_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before pinning, the default was `main`: a cached `main` (any commit) was silently loaded."""
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    cache = _cache_with_snapshot(tmp_path / "cache", COMMIT, ref="main")
    assert _hub.locate_cached("Biology", cache_dir=cache) is None
    with pytest.raises(DataError) as info:
        _hub.load("Biology", cache_dir=cache)
    text = str(info.value)
    assert f"at revision {PINNED_REVISIONS['Biology']} (the pinned default)" in text
    assert f"at other commits ({COMMIT}), which are not used in its place" in text
    assert "--revision COMMIT" in text


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
    from base import ConfigError

    with pytest.raises(ConfigError, match='found "r2med/Cardiology"'):
        load_dataset("r2med/Cardiology")
