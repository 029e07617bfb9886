"""The R2MED paper's reference scores, shipped as package data."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness._paper import best_in_family, paper_datasets, paper_score, paper_systems, reference_rows
from tests._support import SHARED

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
