"""`harness run --load --ann-sweep` end to end on a real Elasticsearch (and a sweep on OpenSearch):
the load phase's counts, ANN recall against an independent recomputation, a flat index's exact
recall, sweep points reproduced from the manifest, and the metric records in the engine."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from harness.ann import SWEEP_PREFIX, DocumentVectors, SweepInputs, SweepOptions, run_sweep
from harness.cli import main
from harness.load import LoadOptions
from harness.results import METRICS_FILE, RunResults, metric_from_json, schema
from harness.sinks import METRICS_INDEX
from indexer import (
    Backend,
    CachedEmbedder,
    ConnectionSettings,
    EmbeddingCache,
    build_encoder,
    connect,
    document_text,
    load_dataset,
    resolve_model,
)
from indexer.backends import KnnSpec
from tests._support import scifact_subset

QUERIES = 40


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("perf") / "perf-subset", n_docs=300, n_test=QUERIES, n_train=5
    )


@pytest.fixture(scope="module")
def perf_run(es_url: str, data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("runs") / "perf"
    argv = [
        "run",
        "hybrid",
        "--dataset",
        str(data_dir),
        "--output",
        str(out),
        "--url",
        es_url,
        "--no-progress",
    ]
    argv += ["--load", "--iterations", "1", "--warmup", "0", "--clients", "2"]
    argv += ["--ann-sweep", "--ann-index-types", "hnsw,flat", "--ann-candidates", "10,40"]
    assert main(argv) == 0
    return out, es_url


@pytest.fixture(scope="module")
def embedder() -> CachedEmbedder:
    cache = EmbeddingCache()
    return CachedEmbedder(build_encoder(resolve_model("minilm"), cache=cache), cache)


def _vectors(embedder: CachedEmbedder, data_dir: Path) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    ds = load_dataset(str(data_dir))
    docs = list(ds.iter_corpus())
    doc_ids = [d.id for d in docs]
    matrix = np.concatenate(
        [v for _, v in embedder.embed_documents((d.id, document_text(d.title, d.text)) for d in docs)]
    )
    qids = sorted(ds.queries)
    return doc_ids, matrix, qids, embedder.embed_queries([ds.queries[q] for q in qids])


def _sweep_inputs(embedder: CachedEmbedder, data_dir: Path) -> SweepInputs:
    """What the run's ANN sweep was given: the subset's cached document and query vectors, its qrels."""
    doc_ids, docs, qids, queries = _vectors(embedder, data_dir)
    qrels = load_dataset(str(data_dir)).qrels
    return SweepInputs("perf-subset", DocumentVectors(tuple(doc_ids), docs), tuple(qids), queries, qrels)


def _recomputed_recall(
    ranked: dict[str, list[str]],
    doc_ids: Sequence[str],
    docs: np.ndarray,
    qids: Sequence[str],
    queries: np.ndarray,
    k: int,
) -> dict[str, float]:
    """Recall@k recomputed here, independently: a full sort of every dot product, set overlap."""
    order = np.argsort(-(queries @ docs.T), axis=1)[:, :k]
    return {
        q: len(set(ranked.get(q, [])[:k]) & {doc_ids[j] for j in order[i]}) / k for i, q in enumerate(qids)
    }


def _trec(path: Path) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, rank, _, _ = line.split()
        ranked.setdefault(qid, []).append((int(rank), doc))
    return {q: [d for _, d in sorted(v)] for q, v in ranked.items()}


def test_every_arm_has_its_load_phase_side_by_side_with_relevance(perf_run: tuple[Path, str]) -> None:
    run_dir, _ = perf_run
    results = RunResults.load(run_dir)
    ds = results.datasets["perf-subset"]
    assert set(ds.arms) == {"lexical", "vector", "hybrid", "hybrid-engine-sum"}
    for name, arm in ds.arms.items():
        assert arm.load is not None, name
        assert arm.load.requests == QUERIES and arm.load.errors == 0 and arm.load.clients == 2
        assert arm.load.service_time_ms.p50 > 0 and arm.load.throughput > 0
    assert (
        ds.arms["hybrid"].load is not None and ds.arms["hybrid"].load.operation == "msearch(lexical+vector)"
    )
    assert results.manifest.load_phase is not None and results.manifest.load_phase.iterations == 1
    report = (run_dir / "report.md").read_text()
    assert "svc ms p50/p99" in report and "load phase" in report and "ANN sweep" in report
    validator = jsonschema.Draft202012Validator(schema())
    errors = list(validator.iter_errors(json.loads((run_dir / "results.json").read_text())))
    assert not errors, errors[:3]


def test_vector_arm_recall_matches_an_independent_recomputation(
    perf_run: tuple[Path, str], embedder: CachedEmbedder, data_dir: Path
) -> None:
    run_dir, _ = perf_run
    ann = RunResults.load(run_dir).datasets["perf-subset"].arms["vector"].ann
    assert ann is not None and 0 < ann.recall["recall@10"] <= 1.0
    doc_ids, docs, qids, queries = _vectors(embedder, data_dir)
    mine = _recomputed_recall(
        _trec(run_dir / "runs" / "perf-subset" / "vector.trec"), doc_ids, docs, qids, queries, 10
    )
    assert ann.per_query["recall@10"] == pytest.approx(mine)
    assert ann.recall["recall@10"] == pytest.approx(np.mean(list(mine.values())), abs=1e-6)


def test_flat_is_exact_and_hnsw_recall_is_at_most_one(perf_run: tuple[Path, str]) -> None:
    sweep = RunResults.load(perf_run[0]).datasets["perf-subset"].ann_sweep
    assert sweep is not None and sweep.settings.parameter == "num_candidates"
    points = {p.label: p for p in sweep.points}
    assert set(points) == {"hnsw@10", "hnsw@40", "flat"}
    assert points["flat"].recall_at_k == 1.0
    assert all(0 < p.recall_at_k <= 1.0 and p.size_bytes > 0 for p in points.values())
    assert points["hnsw@40"].recall_at_k >= points["hnsw@10"].recall_at_k
    assert any(p.frontier for p in sweep.points)


def test_sweep_points_are_reproduced_from_the_manifest(
    perf_run: tuple[Path, str], embedder: CachedEmbedder, data_dir: Path
) -> None:
    run_dir, es_url = perf_run
    results = RunResults.load(run_dir)
    settings = results.manifest.ann_sweep
    assert settings is not None
    first = results.datasets["perf-subset"].ann_sweep
    assert first is not None
    backend = connect(ConnectionSettings(url=es_url))
    try:
        for point in first.points:  # rebuilt from scratch, from the same cached vectors
            backend.delete_index(point.index, missing_ok=True)
        again = run_sweep(
            backend, _sweep_inputs(embedder, data_dir), settings, LoadOptions(iterations=1, warmup_s=0)
        )
    finally:
        backend.close()
    assert again.vectors_sha256 == first.vectors_sha256
    assert [(p.label, p.recall_at_k, p.ndcg_at_10, p.index) for p in again.points] == [
        (p.label, p.recall_at_k, p.ndcg_at_10, p.index) for p in first.points
    ]


def test_load_samples_and_sweep_points_reach_the_engine_and_metrics_jsonl(perf_run: tuple[Path, str]) -> None:
    run_dir, es_url = perf_run
    lines = (run_dir / METRICS_FILE).read_text().splitlines()
    records = [metric_from_json(json.loads(line)) for line in lines]
    kinds = {r.kind for r in records}
    assert kinds == {"load_sample", "ann_point"}
    samples = [r for r in records if r.kind == "load_sample"]
    assert len(samples) == 4 * QUERIES  # four arms (the in-engine sum too), one pass, no warm-up
    run_id = RunResults.load(run_dir).manifest.run_id
    backend = connect(ConnectionSettings(url=es_url))
    try:
        in_engine = backend.count(METRICS_INDEX, {"term": {"run_id": run_id}})
    finally:
        backend.close()
    assert in_engine == len(records)


def test_opensearch_sweep_is_over_ef_search_and_its_recall_matches(
    os_backend: Backend, embedder: CachedEmbedder, data_dir: Path
) -> None:
    settings = SweepOptions(candidates=(10,)).resolve(os_backend.probe())
    assert settings.index_types == ("hnsw",) and settings.parameter == "ef_search"
    inputs = _sweep_inputs(embedder, data_dir)
    sweep = run_sweep(os_backend, inputs, settings, LoadOptions(iterations=1, warmup_s=0))
    [point] = sweep.points
    assert point.index.startswith(SWEEP_PREFIX) and 0 < point.recall_at_k <= 1.0
    run = {}
    for i, q in enumerate(inputs.qids):
        body = {
            "size": 10,
            "_source": False,
            **os_backend.knn_search(KnnSpec("vector", inputs.queries[i].tolist(), 10, 10)),
        }
        run[q] = [h.id for h in os_backend.search(point.index, body).hits]
    mine = _recomputed_recall(run, inputs.docs.ids, inputs.docs.matrix, inputs.qids, inputs.queries, 10)
    assert point.recall_at_k == pytest.approx(np.mean(list(mine.values())), abs=1e-6)
    os_backend.delete_index(point.index, missing_ok=True)
