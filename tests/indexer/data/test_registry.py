"""Spec resolution, format detection and the dataset listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError, DataError
from indexer.data import describe, known_datasets, load_dataset
from tests._support import R2MED_DEMO, SCIFACT


def test_folder_format_is_detected() -> None:
    assert load_dataset(str(R2MED_DEMO)).format == "r2med"
    assert load_dataset(str(SCIFACT)).format == "beir"


def test_a_folder_without_dataset_files_names_what_was_expected(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(DataError, match=r"expected corpus.jsonl with query.jsonl .* found notes.txt"):
        load_dataset(str(tmp_path))


def test_unknown_spec_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="or an existing folder"):
        load_dataset(str(tmp_path / "nowhere"))


def test_known_datasets_lists_sample_and_eight_r2med() -> None:
    rows = known_datasets()
    assert [r.name for r in rows][:2] == ["sample", "r2med/Biology"] and len(rows) == 9
    sample = rows[0]
    assert sample.cached and sample.counts is not None
    assert (sample.counts.documents, sample.counts.queries, sample.counts.judgments) == (5183, 300, 339)


def test_describe_reports_lengths_grades_and_expansions() -> None:
    d = describe(load_dataset(str(R2MED_DEMO)))
    assert d["expansions"][0]["method"] == "hyde" and d["expansions"][0]["llm"] == "qwen-7b"
    assert d["grades"] == {"1": 2} and d["judgments_per_query"] == {"mean": 2, "min": 2, "max": 2}
    assert d["avg_document_words"] > 0 and d["warnings"] == 3
