"""Issue 13, section 5: our load phase side by side with OpenSearch Benchmark (Rally's fork).

The same queries (SciFact's 300 test claims: BM25 ``match`` bodies and kNN bodies with the
harness's vector-arm parameters, k=100 and ef_search=1000, query vectors from the embedding
cache) against the same managed OpenSearch node, at the same client count, for the same
warm-up and measured time: once through ``harness.load`` (our load phase) and once through
``opensearch-benchmark run --pipeline=benchmark-only`` with a workload generated here
(``--workload-path``, ``--offline``; its parameter source replays the same bodies in the same
order per client). Sides alternate per repeat. Printed: service time p50/p99 and throughput of
both, and the ratios ours / theirs. Goal: service time within 10%, throughput >= 0.9x.

opensearch-benchmark runs from its own virtualenv (``--osb``, default
``~/.cache/r2med-harness/bench/osb-venv``; ``--setup-osb`` creates it with pip), never the
project's: its dependency pins are its own. esrally is the same methodology for a full
Elasticsearch; it cannot start against the stripped build (``GET /`` answers 405).

    python bench/load.py --setup-osb                    # once: opensearch-benchmark 2.4.0 in its venv
    python bench/load.py [--clients 1] [--duration 20] [--warmup 5] [--repeats 2] [--operations lexical,vector]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from _common import Row, free_port, print_summary

from harness.load import LoadOptions, SearchOperation, run_load, summarize
from harness.results import LoadResult
from indexer import (
    Backend,
    CachedEmbedder,
    ConnectionSettings,
    EmbeddingCache,
    EngineConfig,
    KnnSpec,
    ManagedNode,
    VectorSpec,
    build_encoder,
    default_cache_dir,
    default_state_dir,
    document_text,
    load_dataset,
    open_backend,
    resolve_model,
)

OSB_VERSION = "2.4.0"
DEFAULT_OSB = default_cache_dir() / "bench" / "osb-venv"
INDEX = "r2med-bench-load"
NODE_NAME = "bench-opensearch"
#: where opensearch-benchmark keeps its test runs (2.x: ~/.osb/benchmarks; older: ~/.benchmark/benchmarks)
OSB_HOMES = (Path.home() / ".osb" / "benchmarks", Path.home() / ".benchmark" / "benchmarks")
PLUGIN = Path(__file__).with_name("resources") / "osb_workload.py"


@contextmanager
def opensearch() -> Iterator[tuple[Backend, str]]:
    """``OS_URL`` when set, else a managed OpenSearch node on a free port (stopped on the way out)."""
    if os.environ.get("OS_URL"):
        backend = open_backend(ConnectionSettings(url=os.environ["OS_URL"]))
        yield backend, f"OpenSearch {backend.probe().version} at OS_URL"
        backend.close()
        return
    config = EngineConfig(
        state_dir=default_state_dir(),
        cache_dir=default_cache_dir(),
        name=NODE_NAME,
        http_port=free_port(),
        heap=os.environ.get("R2MED_BENCH_HEAP", "1g"),
        engine="opensearch",
    )
    node = ManagedNode(config)
    print(f"starting a managed OpenSearch node {NODE_NAME!r} ...", file=sys.stderr)
    status, started = node.start()
    backend = open_backend(ConnectionSettings(url=status.url))
    try:
        yield backend, f"OpenSearch {backend.probe().version}, managed node {NODE_NAME!r} at {status.url}"
    finally:
        backend.close()
        if started:
            node.stop()


def build_index(backend: Backend, embedder: CachedEmbedder) -> None:
    """SciFact with an ``english`` text field and the cached all-MiniLM-L6-v2 vectors (one segment)."""
    ds = load_dataset("sample")
    docs = list(ds.iter_corpus())
    if backend.index_exists(INDEX) and backend.count(INDEX) == len(docs):
        return
    backend.delete_index(INDEX, missing_ok=True)
    vectors = np.concatenate(
        [v for _, v in embedder.embed_documents((d.id, document_text(d.title, d.text)) for d in docs)]
    )
    backend.create_index(
        INDEX,
        settings={"index": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"}},
        mappings={
            "properties": {
                "text": {"type": "text", "analyzer": "english"},
                "vector": backend.vector_mapping(VectorSpec(int(vectors.shape[1]))),
            }
        },
    )
    for start in range(0, len(docs), 500):
        lines = []
        for d, v in zip(docs[start : start + 500], vectors[start : start + 500], strict=True):
            lines.append(json.dumps({"index": {"_index": INDEX, "_id": d.id}}))
            lines.append(json.dumps({"text": document_text(d.title, d.text), "vector": v.tolist()}))
        failed = backend.bulk(("\n".join(lines) + "\n").encode(), timeout_s=120).failed
        if failed:
            raise SystemExit(f"bulk into {INDEX} failed: {failed[0]}")
    backend.refresh(INDEX)
    backend.force_merge(INDEX, max_segments=1)
    backend.refresh(INDEX)


def query_bodies(
    backend: Backend, embedder: CachedEmbedder
) -> dict[str, tuple[tuple[str, ...], list[dict[str, Any]]]]:
    ds = load_dataset("sample")
    qids = tuple(sorted(ds.queries))
    texts = [ds.queries[q] for q in qids]
    common = {"size": 100, "_source": False, "track_total_hits": False}
    vectors = embedder.embed_queries(texts)
    return {
        "lexical": (qids, [{**common, "query": {"match": {"text": t}}} for t in texts]),
        "vector": (
            qids,
            [
                {**common, **backend.knn_search(KnnSpec("vector", [float(x) for x in v], 100, 1000))}
                for v in vectors
            ],
        ),
    }


def write_workload(
    folder: Path, bodies: dict[str, tuple[tuple[str, ...], list[dict[str, Any]]]], args: argparse.Namespace
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(PLUGIN, folder / "workload.py")
    operations, procedures = [], []
    for name, (_, items) in bodies.items():
        (folder / f"bodies-{name}.json").write_text(json.dumps(items), encoding="utf-8")
        operations.append(
            {
                "name": name,
                "operation-type": "search",
                "param-source": "r2med-bodies",
                "index": INDEX,
                "bodies": f"bodies-{name}.json",
            }
        )
        procedures.append(
            {
                "name": name,
                "schedule": [
                    {
                        "operation": name,
                        "clients": args.clients,
                        "warmup-time-period": round(args.warmup),
                        "time-period": round(args.duration),
                    }
                ],
            }
        )
    workload = {
        "version": 2,
        "description": "r2med-harness load phase: SciFact test queries, one search body per query",
        "indices": [{"name": INDEX}],
        "operations": operations,
        "test_procedures": procedures,
    }
    (folder / "workload.json").write_text(json.dumps(workload, indent=1), encoding="utf-8")


def run_osb(osb: Path, folder: Path, url: str, procedure: str) -> dict[str, Any]:
    """One ``opensearch-benchmark run``; its op metrics for ``procedure`` (from the test run's JSON)."""
    run_id = str(uuid.uuid4())
    host = url.split("://", 1)[-1].rstrip("/")
    cmd = [
        str(osb / "bin" / "opensearch-benchmark"),
        "run",
        "--pipeline=benchmark-only",
        f"--workload-path={folder}",
        f"--test-procedure={procedure}",
        f"--target-hosts={host}",
        f"--test-run-id={run_id}",
        "--offline",
        "--on-error=continue",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    found = [p / "test-runs" / run_id / "test_run.json" for p in OSB_HOMES]
    path = next((p for p in found if p.is_file()), found[0])
    if out.returncode != 0 or not path.is_file():
        raise SystemExit(
            f"opensearch-benchmark failed (exit {out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
        )
    doc = json.loads(path.read_text())
    [metrics] = [m for m in doc["results"]["op_metrics"] if m["task"] == procedure]
    return {"command": " ".join(cmd), **metrics}


def run_ours(
    backend: Backend, qids: tuple[str, ...], bodies: list[dict[str, Any]], args: argparse.Namespace
) -> LoadResult:
    op = SearchOperation(backend, INDEX, qids, tuple(bodies))
    return summarize(
        run_load(op, LoadOptions(clients=args.clients, duration_s=args.duration, warmup_s=args.warmup))
    )


def setup_osb(osb: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(osb)], check=True)
    subprocess.run(
        [str(osb / "bin" / "pip"), "install", "-q", f"opensearch-benchmark=={OSB_VERSION}"], check=True
    )
    print(f"opensearch-benchmark {OSB_VERSION} installed in {osb}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument(
        "--duration", type=float, default=20.0, help="measured seconds per side and operation"
    )
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--operations", default="lexical,vector")
    parser.add_argument("--osb", type=Path, default=DEFAULT_OSB, help="opensearch-benchmark's virtualenv")
    parser.add_argument("--setup-osb", action="store_true", help="create that virtualenv (pip) and exit")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args(argv)
    if args.setup_osb:
        setup_osb(args.osb)
        return 0
    if not (args.osb / "bin" / "opensearch-benchmark").is_file():
        raise SystemExit(
            f"no opensearch-benchmark in {args.osb}: run `python bench/load.py --setup-osb` first"
        )
    version = subprocess.run(
        [str(args.osb / "bin" / "opensearch-benchmark"), "--version"], capture_output=True, text=True
    )
    print(
        f"cpus {os.cpu_count()}, load average {os.getloadavg()}, {version.stdout.strip() or version.stderr.strip()}"
    )
    cache = EmbeddingCache()
    embedder = CachedEmbedder(build_encoder(resolve_model("minilm"), cache=cache), cache)
    wanted = [o.strip() for o in args.operations.split(",") if o.strip()]
    figures: dict[str, list[dict[str, Any]]] = {op: [] for op in wanted}
    with opensearch() as (backend, description), tempfile.TemporaryDirectory() as tmp:
        print(f"engine: {description}")
        build_index(backend, embedder)
        bodies = {k: v for k, v in query_bodies(backend, embedder).items() if k in wanted}
        folder = Path(tmp) / "workload"
        write_workload(folder, bodies, args)
        for repeat in range(args.repeats):
            for op, (qids, items) in bodies.items():
                sides = ["ours", "osb"] if repeat % 2 == 0 else ["osb", "ours"]
                row: dict[str, Any] = {"repeat": repeat}
                for side in sides:
                    began = time.monotonic()
                    if side == "ours":
                        mine = run_ours(backend, qids, items, args)
                        row["ours"] = {
                            "p50": mine.service_time_ms.p50,
                            "p99": mine.service_time_ms.p99,
                            "throughput": mine.throughput,
                            "errors": mine.errors,
                            "client_cpu_p50": mine.client_cpu_ms.p50,
                            "requests": mine.requests,
                        }
                    else:
                        theirs = run_osb(args.osb, folder, backend.url, op)
                        row["osb"] = {
                            "p50": theirs["service_time"]["50_0"],
                            "p99": theirs["service_time"]["99_0"],
                            "throughput": theirs["throughput"]["mean"],
                            "error_rate": theirs["error_rate"],
                            "command": theirs["command"],
                        }
                    print(
                        f"  {op} repeat {repeat + 1} {side}: {json.dumps({k: v for k, v in row[side].items() if k != 'command'})} ({time.monotonic() - began:.0f} s)"
                    )
                figures[op].append(row)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    rows = []
    for op, repeats in figures.items():
        for key, label, target, better in (
            ("p50", "service p50 ms", "<= 1.10x", "low"),
            ("p99", "service p99 ms", "<= 1.10x", "low"),
            ("throughput", "throughput req/s", ">= 0.90x", "high"),
        ):
            ours = [r["ours"][key] for r in repeats]
            theirs = [r["osb"][key] for r in repeats]
            ratio = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
            met = ratio <= 1.10 if better == "low" else ratio >= 0.90
            rows.append(
                Row(
                    f"{op}: {label}",
                    f"{statistics.median(ours):.2f}",
                    f"{statistics.median(theirs):.2f}",
                    ratio,
                    target,
                    met,
                )
            )
    print(f"\nopensearch-benchmark command (per operation): {figures[wanted[0]][0]['osb']['command']}")
    print_summary(
        f"ours / opensearch-benchmark {OSB_VERSION}, {args.clients} client(s), {args.duration:g} s after {args.warmup:g} s warm-up, median of {args.repeats} paired ratios",
        rows,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
