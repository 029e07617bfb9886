"""The R2MED paper's reference scores, shipped as package data."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from harness._paper import (
    BASELINES_RESOURCE,
    best_in_family,
    paper_datasets,
    paper_score,
    paper_systems,
    published_baselines,
    r2med_source,
    reference_rows,
)
from indexer.data import load_dataset
from tests._support import SCIFACT, SHARED, scifact_subset

REFERENCE = SHARED / "reference"


def _shared() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / "r2med_paper_results.json").read_text(encoding="utf-8"))
    return data


def test_packaged_scores_equal_the_shared_reference() -> None:
    systems = _shared()["systems"]
    assert paper_systems() == sorted(systems)
    for system, per_dataset in systems.items():
        for dataset, metrics in per_dataset.items():
            for metric, value in metrics.items():
                assert paper_score(system, f"r2med/{dataset}", metric) == value


def test_scores_agree_with_the_readable_table() -> None:
    lines = (REFERENCE / "r2med_paper_ndcg10_table.txt").read_text(encoding="utf-8").splitlines()
    header = lines[0].split()
    bm25 = next(line for line in lines if line.startswith("base retriever/bm25"))
    first_value = float(bm25.split()[2])  # "base retriever/bm25" is two tokens
    assert header[1] == "Biology"
    assert paper_score("base retriever/bm25", "r2med/Biology") == pytest.approx(first_value / 100, abs=5e-5)


def test_dataset_and_metric_names_are_mapped() -> None:
    assert len(paper_datasets()) == 8
    value = paper_score("base retriever/bm25", "r2med/MedQA-Diag", "ndcg_at_10")
    assert value is not None
    assert paper_score("base retriever/bm25", "MedQA-Diag", "ndcg@10") == value
    assert paper_score("base retriever/bm25", "R2MED/medqa-diag") == value
    assert paper_score("base retriever/bm25", "sample") is None
    assert paper_score("no such system", "r2med/Biology") is None


@pytest.mark.parametrize("dataset", ["r2med/Biology", "r2med/IIYi-Clinical"])
def test_best_in_family_is_the_maximum_of_that_family(dataset: str) -> None:
    systems = _shared()["systems"]
    name = dataset.split("/")[1]
    dense = best_in_family(dataset, "dense")
    gar = best_in_family(dataset, "gar")
    assert dense is not None and gar is not None
    assert dense.system.startswith("base retriever/") and dense.system != "base retriever/bm25"
    assert gar.system.startswith("gar/")
    for system, per_dataset in systems.items():
        score = per_dataset[name]["ndcg_at_10"]
        if system.startswith("gar/"):
            assert score <= gar.score
        elif system.startswith("base retriever/") and system != "base retriever/bm25":
            assert score <= dense.score
    rows = reference_rows(dataset)
    assert [r.label for r in rows] == ["BM25", "best dense retriever", "best generation-augmented"]
    assert rows[0].score == systems["base retriever/bm25"][name]["ndcg_at_10"]


def test_unknown_family_is_refused() -> None:
    with pytest.raises(KeyError, match="expected a family"):
        best_in_family("r2med/Biology", "sparse")


def _source_md_figure(system: str) -> float:
    found = re.search(rf"{system}[^:]*: ([0-9.]+)", (SCIFACT / "SOURCE.md").read_text(encoding="utf-8"))
    assert found is not None
    return float(found.group(1))


@pytest.mark.parametrize("source", ["sample", str(SCIFACT)])
def test_scifact_gets_its_published_bm25_by_its_fingerprint(source: str) -> None:
    """The bundled sample and the shared SciFact folder are the BEIR SciFact test set (same corpus and qrels
    hashes), whatever their names: both get the figures that ../shared/datasets/scifact/SOURCE.md gives."""
    ds = load_dataset(source)
    found = {b.label: b for b in published_baselines(ds.name, ds.split, asdict(ds.fingerprint))}
    assert found["BM25"].score == _source_md_figure("Elasticsearch BM25")
    assert found["BM25 (Lucene, one field)"].score == _source_md_figure("Lucene BM25")
    assert "Thakur" in found["BM25"].source and "Table 2" in found["BM25"].source


def test_other_judgments_or_splits_get_no_published_figure(tmp_path: Path) -> None:
    cut = load_dataset(str(scifact_subset(tmp_path / "cut", n_docs=60, n_test=10, n_train=0)))
    assert published_baselines(cut.name, cut.split, asdict(cut.fingerprint)) == []  # 10 of the 300 queries
    assert [b.score for b in published_baselines("beir/NFCorpus", "test")] == [0.325]  # by name
    assert published_baselines("nfcorpus", "train") == []


def test_every_packaged_figure_names_its_source_and_how_it_was_checked() -> None:
    data = json.loads(files("harness").joinpath("resources", BASELINES_RESOURCE).read_text(encoding="utf-8"))
    assert data["metric"] == "ndcg@10"
    for entry in data["datasets"]:
        assert entry["names"] and entry["split"] in ("test", "dev")
        for b in entry["baselines"]:
            assert b["source"] in data["sources"] and b["checked"]
            assert 0 < b["score"] < 1


def test_r2med_datasets_get_the_papers_rows_with_its_source() -> None:
    rows = published_baselines("r2med/Biology")
    assert [b.label for b in rows] == [r.label for r in reference_rows("r2med/Biology")]
    assert all(b.source == r2med_source() for b in rows)
    assert rows[0].score == paper_score("base retriever/bm25", "r2med/Biology")
