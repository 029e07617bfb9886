"""`--embed-backend onnx-int8` end to end on the real engine, on a small SciFact cut: index, kNN search,
run, and what the index `_meta`, the manifest and the conflict check say about the numerics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.cli import main
from indexer import Backend
from indexer._build import resolve_alias
from indexer._layout import alias_for
from indexer.data import load_dataset
from indexer.embed import CachedEmbedder, EmbeddingCache, Encoder, document_text, resolve_model
from tests._support import own_cache, record_auto_choice, scifact_subset

NAME = "int8-subset"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("int8") / NAME, n_docs=120, n_test=20, n_train=5)


@pytest.fixture(scope="module")
def int8_index(es_url: str, es_inspect: Any, es_backend: Backend, data_dir: Path) -> str:
    for name in es_inspect.indices.get(index=f"{alias_for(NAME)}*", ignore_unavailable=True).body:
        es_inspect.indices.delete(index=name)
    code = main(
        [
            "index",
            "--dataset",
            str(data_dir),
            "--embed-backend",
            "onnx-int8",
            "--url",
            es_url,
            "--no-progress",
        ]
    )
    assert code == 0
    found = resolve_alias(es_backend, NAME)
    assert found is not None
    return found[0]


def test_index_meta_records_the_backend(es_inspect: Any, int8_index: str) -> None:
    meta = es_inspect.indices.get_mapping(index=int8_index)[int8_index]["mappings"]["_meta"]
    (field, model) = next(iter(meta["models"].items()))
    assert field == "vec_all_minilm_l6_v2"
    assert (model["backend"], model["precision"]) == ("onnx-int8", "int8")


def test_int8_vectors_are_in_the_index_and_knn_finds_documents(
    es_inspect: Any, int8_index: str, data_dir: Path
) -> None:
    dataset = load_dataset(str(data_dir))
    doc = next(dataset.iter_corpus())
    embedder = CachedEmbedder(Encoder(resolve_model("minilm"), backend="onnx-int8"), EmbeddingCache())
    (_, vectors), *_ = list(embedder.embed_documents([(doc.id, document_text(doc.title, doc.text))]))
    assert embedder.stats.cache_hits == 1  # indexing put it in the shared cache under the int8 key
    stored = es_inspect.get(index=int8_index, id=doc.id, source_includes=["vec_all_minilm_l6_v2"])
    np.testing.assert_allclose(stored["_source"]["vec_all_minilm_l6_v2"], vectors[0], atol=1e-6)
    # the document's own int8 vector finds it first
    found = es_inspect.search(
        index=int8_index,
        knn={
            "field": "vec_all_minilm_l6_v2",
            "query_vector": vectors[0].tolist(),
            "k": 5,
            "num_candidates": 50,
        },
    )
    assert found["hits"]["hits"][0]["_id"] == doc.id


def test_int8_run_records_numerics_and_ranks_well(
    es_url: str, int8_index: str, data_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "int8-run"
    args = [
        "run",
        "vector",
        "--dataset",
        str(data_dir),
        "--output",
        str(out),
        "--url",
        es_url,
        "--no-progress",
    ]
    assert main([*args, "--embed-backend", "onnx-int8", "--records", "jsonl"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["model"]["backend"], manifest["model"]["precision"]) == ("onnx-int8", "int8")
    assert manifest["config"]["model"]["backend"] == "onnx-int8"  # part of the config hash
    ndcg = json.loads((out / "results.json").read_text())["datasets"][NAME]["arms"]["vector"]["metrics"][
        "ndcg@10"
    ]
    assert ndcg > 0.5  # 20 judged SciFact claims over 120 documents; torch scores about 0.8 here


def test_the_reference_builds_beside_other_numerics(
    es_url: str, es_backend: Backend, int8_index: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 21: indices of other numerics have names of their own, so torch (the old default) is not
    refused by the int8 index, and neither index is touched by the other's build."""
    assert int8_index.endswith("-onnx-int8-int8")
    int8_docs = es_backend.count(int8_index)
    code = main(
        ["index", "--dataset", str(data_dir), "--embed-backend", "torch", "--url", es_url, "--no-progress"]
    )
    assert code == 0, capsys.readouterr().err
    found = resolve_alias(es_backend, NAME)
    assert found is not None and found[0] == int8_index.removesuffix("-onnx-int8-int8")
    (model,) = found[1]["models"].values()
    assert (model["backend"], model["precision"]) == ("torch", "fp32")
    (int8_model,) = es_backend.get_mapping(int8_index).meta["models"].values()
    assert int8_model["backend"] == "onnx-int8" and es_backend.count(int8_index) == int8_docs


def test_auto_is_the_default_and_the_manifest_says_what_it_chose_and_why(
    es_url: str,
    int8_index: str,
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without --embed-backend, auto decides; this machine's decision (fixed here to int8, as if its check
    had chosen it) reaches the manifest with its reason, and the int8 index of the fixture is reused."""
    own_cache(monkeypatch, tmp_path / "cache")
    record_auto_choice(resolve_model("minilm"), "onnx-int8", "int8")
    out = tmp_path / "auto-run"
    args = ["run", "vector", "--dataset", str(data_dir), "--output", str(out), "--url", es_url]
    assert main([*args, "--no-progress", "--records", "jsonl"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    model = manifest["model"]
    assert (model["backend"], model["precision"]) == ("onnx-int8", "int8")
    assert (
        model["chosen_by"].startswith("auto: onnx-int8/int8 on ")
        and "recorded by the test" in model["chosen_by"]
    )
    results = json.loads((out / "results.json").read_text())
    assert results["manifest"]["model"]["chosen_by"] == model["chosen_by"]
    assert results["datasets"][NAME]["index"] == int8_index
