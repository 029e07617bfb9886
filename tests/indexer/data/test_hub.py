"""``r2med/<Name>``: hub-layout folders (data dir and HF cache) load through the R2MED code path.

Each test that reaches the hub's cache says where it is and that the hub is offline (``hub`` below): the
outcome never depends on the network or on what the machine exports (HF_HUB_OFFLINE, HF_HUB_CACHE)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from base import DataError
from indexer.data import DATA_DIR_ENV, PINNED_REVISIONS, R2MED_NAMES, load_dataset, resolve_specs
from tests._support import R2MED_DEMO

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hub's cache, an empty folder of this test's, with downloads off (HF_HUB_OFFLINE=1, as a user sets
    it; huggingface_hub reads its variables once, at import, so its constants are set too); no data dir."""
    from huggingface_hub import constants

    cache = tmp_path / "hub-cache"
    cache.mkdir()
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


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


def test_pinned_snapshot_loads_by_default_and_says_its_revision(hub: Path) -> None:
    pinned = PINNED_REVISIONS["Biology"]
    _cache_with_snapshot(hub, pinned)
    ds = load_dataset("r2med/Biology")
    assert ds.revision == pinned
    assert ds.source == f"hf://datasets/R2MED/Biology@{pinned}"
    assert ds.fingerprint == load_dataset(str(R2MED_DEMO)).fingerprint


def test_revision_main_or_a_commit_still_overrides_the_pin(hub: Path) -> None:
    _cache_with_snapshot(hub, COMMIT, ref="main")
    for revision in ("main", COMMIT):
        ds = load_dataset("r2med/Biology", revision=revision)
        assert ds.revision == COMMIT
        assert ds.source == f"hf://datasets/R2MED/Biology@{COMMIT}"


def test_a_snapshot_at_another_commit_is_not_used_for_the_pinned_one(hub: Path) -> None:
    """Before pinning, the default was `main`: a cached `main` (any commit) was silently loaded."""
    _cache_with_snapshot(hub, COMMIT, ref="main")
    with pytest.raises(DataError) as info:
        load_dataset("r2med/Biology")
    text = str(info.value)
    assert f"at revision {PINNED_REVISIONS['Biology']} (the pinned default)" in text
    assert f"at other commits ({COMMIT}), which are not used in its place" in text
    assert "--revision COMMIT" in text


def test_unavailable_dataset_says_which_files_to_place_where(
    hub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(DataError) as info:
        load_dataset("r2med/PMC-Clinical")
    text = str(info.value)
    assert "R2MED/PMC-Clinical" in text
    assert "place corpus.jsonl, query.jsonl and qrels.jsonl (or qrels.txt)" in text
    assert "$R2MED_DATA_DIR/PMC-Clinical" in text and "--dataset PATH" in text

    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "r2med"))
    with pytest.raises(DataError, match=r"under .*r2med/PMC-Clinical \(R2MED_DATA_DIR is set"):
        load_dataset("r2med/PMC-Clinical")


def test_resolve_specs_expands_r2med() -> None:
    assert resolve_specs("r2med") == [f"r2med/{name}" for name in R2MED_NAMES]
    assert len(R2MED_NAMES) == 8
    assert resolve_specs("sample, r2med/medqa-diag") == ["sample", "r2med/MedQA-Diag"]


def test_unknown_r2med_name_is_a_config_error() -> None:
    from base import ConfigError

    with pytest.raises(ConfigError, match='found "r2med/Cardiology"'):
        load_dataset("r2med/Cardiology")
