"""``--ann-sweep``: one index per vector index type, built from the same cached vectors, searched
at every candidate count; per point recall@k against exact search, nDCG@10, service time from a
load phase and the index's size on disk.

Sweep indices (``r2med-ann-<dataset>-<vectors sha>-<type>-m<m>-ef<ef>``) hold only the vector
field (``_source`` off), one shard, no replica, and are force-merged to one segment, so the
size is the vector structure's and every query searches one graph. An index whose ``_meta``
names the same vectors and says it was completed is reused; anything else is rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from base import IndexingError, slug
from harness._errors import RunError
from harness.ann._exact import DocumentVectors, ExactNeighbours, exact_top_k, recall_at
from harness.ann._options import is_exact
from harness.eval import evaluate, rank
from harness.load import LoadOptions, SearchOperation, run_load, summarize
from harness.results import AnnPoint, AnnSweep, SweepSettings
from indexer import Backend, KnnSpec, VectorSpec

FIELD = "vector"
BULK_DOCS = 500
MSEARCH_BATCH = 32
SWEEP_PREFIX = "r2med-ann-"


@dataclass(frozen=True, slots=True)
class SweepInputs:
    """What a sweep searches: the document vectors, the queries (ids, vectors) and their judgments."""

    dataset: str
    docs: DocumentVectors
    qids: tuple[str, ...]
    queries: np.ndarray
    qrels: Mapping[str, Mapping[str, int]]


def sweep_index_name(dataset: str, vectors_sha: str, index_type: str, settings: SweepSettings) -> str:
    return (
        f"{SWEEP_PREFIX}{slug(dataset)}-{vectors_sha[:10]}-{slug(index_type)}"
        f"-m{settings.m}-ef{settings.ef_construction}"
    )


def _bulk_lines(name: str, docs: DocumentVectors, start: int, stop: int) -> bytes:
    import json

    out = []
    for i in range(start, stop):
        out.append(json.dumps({"index": {"_index": name, "_id": docs.ids[i]}}))
        out.append(json.dumps({FIELD: docs.matrix[i].tolist()}))
    return ("\n".join(out) + "\n").encode()


#: the ``_meta`` mark ``harness indices list|delete`` knows its indices by (indexer._admin)
HARNESS_MARK = "r2med-harness"


def ensure_index(
    backend: Backend, name: str, spec: VectorSpec, docs: DocumentVectors, sha: str, dataset: str = ""
) -> int:
    """The sweep index ``name`` (reused when complete and built from ``sha``); returns its size in bytes."""
    if backend.index_exists(name):
        found = backend.get_mapping(name).meta
        if (
            found.get("vectors_sha256") == sha
            and found.get("complete")
            and backend.count(name) == len(docs.ids)
        ):
            return _size(backend, name)
        backend.delete_index(name, missing_ok=True)
    meta: dict[str, Any] = {
        "harness": HARNESS_MARK,  # listed and deletable with `harness indices`
        "dataset": dataset,
        "status": f"ann sweep ({spec.index_type})",
        "vectors_sha256": sha,
        "index_type": spec.index_type,
        "complete": False,
    }
    backend.create_index(
        name,
        settings={"index": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"}},
        mappings={
            "_source": {"enabled": False},
            "_meta": meta,
            "properties": {FIELD: backend.vector_mapping(spec)},
        },
    )
    for start in range(0, len(docs.ids), BULK_DOCS):
        result = backend.bulk(
            _bulk_lines(name, docs, start, min(start + BULK_DOCS, len(docs.ids))), timeout_s=120
        )
        if result.failed:
            first = result.failed[0]
            raise IndexingError(
                f"{len(result.failed)} vector(s) rejected by sweep index {name}; first: {first.doc_id} "
                f"{first.error_type}: {first.reason}"
            )
    backend.refresh(name)
    backend.force_merge(name, max_segments=1)
    backend.refresh(name)
    if backend.count(name) != len(docs.ids):
        raise IndexingError(
            f"sweep index {name} holds {backend.count(name)} vectors, expected {len(docs.ids)}"
        )
    backend.put_mapping(name, meta={**meta, "complete": True})
    return _size(backend, name)


def _size(backend: Backend, name: str) -> int:
    stats = backend.list_indices(name)
    return stats[0].size_bytes if stats else 0


def _bodies(backend: Backend, inputs: SweepInputs, k: int, candidates: int) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "size": k,
            "_source": False,
            "track_total_hits": False,
            **backend.knn_search(KnnSpec(FIELD, [float(x) for x in vector], k, max(candidates, k))),
        }
        for vector in inputs.queries
    )


def _rankings(
    backend: Backend, index: str, bodies: Sequence[dict[str, Any]], qids: Sequence[str]
) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for start in range(0, len(bodies), MSEARCH_BATCH):
        answers = backend.msearch(index, bodies[start : start + MSEARCH_BATCH], timeout_s=120)
        for qid, answer in zip(qids[start : start + MSEARCH_BATCH], answers, strict=True):
            if answer.error is not None:
                raise RunError(
                    f"ANN sweep search of query {qid} on {index} failed (HTTP {answer.status}): {answer.error}"
                )
            run[qid] = answer.ranking
    return run


def _recall(
    run: Mapping[str, Mapping[str, float]], inputs: SweepInputs, exact: ExactNeighbours, k: int
) -> float:
    rows = inputs.docs.rows
    values = []
    for i, qid in enumerate(inputs.qids):
        ranked = [d for d, _ in rank(run.get(qid, {}), qid)]
        values.append(
            recall_at(ranked, inputs.queries[i], float(exact.scores[i, k - 1]), inputs.docs, rows, k)
        )
    return round(float(np.mean(values)), 6) if values else 0.0


def mark_frontier(points: Sequence[AnnPoint]) -> tuple[AnnPoint, ...]:
    """Flag the recall-latency Pareto frontier: no other point is at least as fast with higher recall."""
    best = -1.0
    on: set[int] = set()
    for i in sorted(
        range(len(points)), key=lambda i: (points[i].service_time_ms.p50, -points[i].recall_at_k)
    ):
        if points[i].recall_at_k > best:
            on.add(i)
            best = points[i].recall_at_k
    return tuple(replace(p, frontier=i in on) for i, p in enumerate(points))


def run_sweep(
    backend: Backend,
    inputs: SweepInputs,
    settings: SweepSettings,
    load: LoadOptions,
    *,
    say: Callable[[str], None] = lambda _: None,
) -> AnnSweep:
    """Every point of ``settings`` on ``backend``; ``say`` hears one line per index and per point."""
    k = min(settings.k, len(inputs.docs.ids))
    exact = exact_top_k(inputs.queries, inputs.docs.matrix, k)
    sha = inputs.docs.sha256
    dims = int(inputs.docs.matrix.shape[1])
    points: list[AnnPoint] = []
    for index_type in settings.index_types:
        spec = VectorSpec(dims, "dot_product", index_type, settings.m, settings.ef_construction)
        name = sweep_index_name(inputs.dataset, sha, index_type, settings)
        size = ensure_index(backend, name, spec, inputs.docs, sha, inputs.dataset)
        say(f"ann sweep: {name} ({size / 1e6:.1f} MB)")
        for candidates in (None,) if is_exact(index_type) else settings.candidates:
            bodies = _bodies(backend, inputs, k, candidates or k)
            run = _rankings(backend, name, bodies, inputs.qids)
            ndcg = evaluate(inputs.qrels, run, ("ndcg@10",)).means["ndcg@10"]
            loaded = summarize(run_load(SearchOperation(backend, name, inputs.qids, bodies), load))
            point = AnnPoint(
                index_type=index_type,
                candidates=candidates,
                recall_at_k=_recall(run, inputs, exact, k),
                ndcg_at_10=round(float(ndcg), 6),
                service_time_ms=loaded.service_time_ms,
                latency_ms=loaded.latency_ms,
                throughput=loaded.throughput,
                size_bytes=size,
                index=name,
                errors=loaded.errors,
            )
            say(
                f"ann sweep: {point.label}: recall@{k} {point.recall_at_k:.4f}, nDCG@10 {point.ndcg_at_10:.4f}, "
                f"service p50 {point.service_time_ms.p50:.2f} ms"
            )
            points.append(point)
    return AnnSweep(
        settings=settings,
        vector_field=FIELD,
        vectors_sha256=sha,
        documents=len(inputs.docs.ids),
        queries=len(inputs.qids),
        exact=f"client: numpy dot product over {len(inputs.docs.ids)} cached document vectors",
        points=mark_frontier(points),
    )
