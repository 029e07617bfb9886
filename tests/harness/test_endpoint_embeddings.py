"""`harness index` and `harness run` with embeddings from an OpenAI-compatible endpoint
(``--model openai:MODEL --base-url URL``), against the real Elasticsearch of the test session.

The endpoint is the test server (tests/_openai_server.py) serving all-MiniLM-L6-v2 from the packaged
weights, so the vector arm through the endpoint must score as the local model does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from indexer import Backend, ModelSpec
from tests._openai_server import OpenAIServer
from tests._support import drop_indices, scifact_subset

MODEL = "openai:minilm-endpoint"
N_DOCS, N_QUERIES = 100, 12


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("endpoint") / "llm-endpoint-embed", n_docs=N_DOCS, n_test=N_QUERIES
    )


def _ndcg(run_dir: Path, dataset: str = "llm-endpoint-embed") -> dict[str, Any]:
    results = json.loads((run_dir / "results.json").read_text())
    return results["datasets"][dataset]["arms"]["vector"]["metrics"]["ndcg@10"]


def test_index_and_run_through_the_endpoint(
    server: OpenAIServer,
    minilm: ModelSpec,
    subset: Path,
    tmp_path: Path,
    es_url: str,
    es_backend: Backend,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("R2MED_HARNESS_CACHE", str(tmp_path / "cache"))  # a fresh embedding cache
    server.state.embeddings = "minilm"  # the model's own vectors, to compare with the local model's
    drop_indices(es_backend, "r2med-llm-endpoint-embed*")  # a kept node may hold it from an earlier session
    endpoint = ["--base-url", server.url, "--url", es_url, "--no-progress"]
    assert main(["index", "--dataset", str(subset), "--model", MODEL, *endpoint]) == 0
    indexed = " ".join(capfd.readouterr().out.split())
    assert server.state.texts_embedded == N_DOCS + 1, "every document once, plus the dimension probe"
    assert f"model calls {-(-N_DOCS // 32)}" in indexed
    mapping = es_backend.get_mapping("r2med-llm-endpoint-embed")
    assert mapping.properties["vec_openai_minilm_endpoint"]["dims"] == 384
    meta = mapping.meta["models"]["vec_openai_minilm_endpoint"]
    assert (meta["model_id"], meta["revision"], meta["dims"]) == (MODEL, "endpoint", 384)

    run = ["run", "vector", "--dataset", str(subset), "--model", MODEL, "--records", "jsonl", *endpoint]
    assert main([*run, "--output", str(tmp_path / "first")]) == 0
    calls = server.state.calls["embeddings"]
    assert server.state.texts_embedded == N_DOCS + 1 + N_QUERIES, "only the queries were new"
    assert main([*run, "--output", str(tmp_path / "second")]) == 0
    assert server.state.calls["embeddings"] == calls, "a second run makes 0 calls"
    manifest = json.loads((tmp_path / "first" / "manifest.json").read_text())
    assert manifest["model"]["id"] == MODEL

    # the local model on a copy of the data (its own index, built whole): adding its vectors to the
    # endpoint's index would replace every document and wait up to 30 s for the engine to release them
    copy = shutil.copytree(subset, tmp_path / "llm-endpoint-embed-local")
    local = ["run", "vector", "--dataset", str(copy), "--model", "minilm", "--records", "jsonl"]
    assert main([*local, "--url", es_url, "--no-progress", "--output", str(tmp_path / "local")]) == 0
    remote_ndcg, local_ndcg = _ndcg(tmp_path / "first"), _ndcg(tmp_path / "local", copy.name)
    assert remote_ndcg == pytest.approx(local_ndcg, abs=1e-3), "the same model through the endpoint"
    with capfd.disabled():
        print(
            f"\n  endpoint embeddings: {N_DOCS} docs + {N_QUERIES} queries in {calls} calls; second run 0 calls; "
            f"vector nDCG@10 endpoint {remote_ndcg:.4f} vs local {local_ndcg:.4f}"
        )
