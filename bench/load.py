"""Issue 13, section 5: our load phase side by side with OpenSearch Benchmark (Rally's fork).

The same queries (SciFact's 300 test claims: BM25 ``match`` bodies and kNN bodies with the
harness's vector-arm parameters, k=100 and ef_search=1000, query vectors from the embedding
cache) against the same managed OpenSearch node, at the same client count, for the same
warm-up and measured time: once through ``harness.load`` (our load phase) and once through
``opensearch-benchmark run --pipeline=benchmark-only`` with a workload generated here
(``--workload-path``, ``--offline``; its parameter source replays the same bodies in the same
order per client). Sides alternate per repeat. Printed: service time p50/p99 and throughput of
both, and the ratios ours / theirs. Goal: service time within 10%, throughput >= 0.9x.

The reference tool runs from its own virtualenv under ``~/.cache/r2med-harness/bench/`` (``--setup``
creates it with pip), never the project's: its dependency pins are its own. ``--engine
elasticsearch`` uses esrally (a generated ``--track-path`` track, the same parameter source) against
``ES_URL`` or a managed Elasticsearch node; esrally reads the version from ``GET /``, which the stripped
build answers with 405, so against that build the script stops and says so.

    python bench/load.py --setup                        # once: opensearch-benchmark 2.4.0 in its venv
    python bench/load.py [--clients 1] [--duration 20] [--warmup 5] [--repeats 2] [--operations lexical,vector]
    python bench/load.py --engine elasticsearch --setup  # esrally 2.13.0, for a full Elasticsearch (ES_URL)
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _common import Row, free_port, print_summary

from base import default_cache_dir, default_state_dir
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
    connect,
    document_text,
    load_dataset,
    resolve_model,
)


@dataclass(frozen=True, slots=True)
class ReferenceTool:
    """A Rally-family benchmark tool: how to install it, lay out its workload/track, run it, read its results."""

    name: str
    package: str
    version: str
    venv: Path
    command: tuple[str, ...]  # executable (in the venv's bin) and subcommand
    path_flag: str
    procedure_flag: str
    id_flag: str
    procedures_key: str
    definition: str  # workload.json | track.json
    plugin: str  # workload.py | track.py
    results: tuple[Path, ...]  # folders holding <id>/<file>
    results_file: str

    @property
    def executable(self) -> Path:
        return self.venv / "bin" / self.command[0]


CACHE = default_cache_dir() / "bench"
#: the reference tool per engine: OpenSearch Benchmark for OpenSearch, Rally for a full Elasticsearch
TOOLS: dict[str, ReferenceTool] = {
    "opensearch": ReferenceTool(
        "opensearch-benchmark",
        "opensearch-benchmark",
        "2.4.0",
        CACHE / "osb-venv",
        ("opensearch-benchmark", "run"),
        "--workload-path",
        "--test-procedure",
        "--test-run-id",
        "test_procedures",
        "workload.json",
        "workload.py",
        (
            Path.home() / ".osb" / "benchmarks" / "test-runs",
            Path.home() / ".benchmark" / "benchmarks" / "test-runs",
        ),
        "test_run.json",
    ),
    "elasticsearch": ReferenceTool(
        "esrally",
        "esrally",
        "2.13.0",
        CACHE / "esrally-venv",
        ("esrally", "race"),
        "--track-path",
        "--challenge",
        "--race-id",
        "challenges",
        "track.json",
        "track.py",
        (Path.home() / ".rally" / "benchmarks" / "races",),
        "race.json",
    ),
}
INDEX = "r2med-bench-load"
PLUGIN = Path(__file__).with_name("resources") / "osb_workload.py"


def rest_root(url: str) -> int:
    """The HTTP status of ``GET /`` (Rally-family tools read the version from it at start)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url.rstrip("/") + "/", timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


@contextmanager
def engine(product: str) -> Iterator[tuple[Backend, str]]:
    """``OS_URL``/``ES_URL`` when set, else a managed node of ``product`` on a free port (stopped after)."""
    var = "OS_URL" if product == "opensearch" else "ES_URL"
    node: ManagedNode | None = None
    started = False
    if os.environ.get(var):
        url, where = os.environ[var], var
    else:
        config = EngineConfig(
            state_dir=default_state_dir(),
            cache_dir=default_cache_dir(),
            name=f"bench-{product}",
            http_port=free_port(),
            heap=os.environ.get("R2MED_BENCH_HEAP", "1g"),
            engine=product,
        )
        node = ManagedNode(config)
        print(f"starting a managed {product} node {config.name!r} ...", file=sys.stderr)
        status, started = node.start()
        url, where = status.url, f"managed node {config.name!r} at {status.url}"
    backend = connect(ConnectionSettings(url=url))
    try:
        yield backend, f"{product} {backend.probe().version}, {where}"
    finally:
        backend.close()
        if node is not None and started:
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
    tool: ReferenceTool,
    folder: Path,
    bodies: dict[str, tuple[tuple[str, ...], list[dict[str, Any]]]],
    args: argparse.Namespace,
) -> None:
    """The workload (OSB) or track (Rally): one operation and one procedure per arm, the bodies as files."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(PLUGIN, folder / tool.plugin)
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
                "default": not procedures,
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
        tool.procedures_key: procedures,
    }
    (folder / tool.definition).write_text(json.dumps(workload, indent=1), encoding="utf-8")


def run_tool(tool: ReferenceTool, folder: Path, url: str, procedure: str) -> dict[str, Any]:
    """One benchmark-only run of the reference tool; its op metrics for ``procedure`` (from its results JSON)."""
    run_id = str(uuid.uuid4())
    host = url.split("://", 1)[-1].rstrip("/")
    cmd = [
        str(tool.executable),
        *tool.command[1:],
        "--pipeline=benchmark-only",
        f"{tool.path_flag}={folder}",
        f"{tool.procedure_flag}={procedure}",
        f"--target-hosts={host}",
        f"{tool.id_flag}={run_id}",
        "--offline",
        "--on-error=continue",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    found = [root / run_id / tool.results_file for root in tool.results]
    path = next((p for p in found if p.is_file()), found[0])
    if out.returncode != 0 or not path.is_file():
        raise SystemExit(
            f"{tool.name} failed (exit {out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
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


def setup(tool: ReferenceTool) -> None:
    """The tool in its own virtualenv (its dependency pins are its own, never the project's)."""
    subprocess.run([sys.executable, "-m", "venv", str(tool.venv)], check=True)
    subprocess.run(
        [str(tool.venv / "bin" / "pip"), "install", "-q", f"{tool.package}=={tool.version}"], check=True
    )
    print(f"{tool.package} {tool.version} installed in {tool.venv}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--engine", choices=sorted(TOOLS), default="opensearch", help="and so the reference tool"
    )
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--duration", type=int, default=20, help="measured seconds per side and operation")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--operations", default="lexical,vector")
    parser.add_argument(
        "--setup", action="store_true", help="install the reference tool in its virtualenv, exit"
    )
    parser.add_argument("--json", type=Path, help="write every figure here")
    return parser


def _measure(
    tool: ReferenceTool, backend: Backend, folder: Path, bodies: dict[str, Any], args: argparse.Namespace
) -> dict[str, list[dict[str, Any]]]:
    """Both sides for every operation and repeat, alternating which goes first."""
    figures: dict[str, list[dict[str, Any]]] = {op: [] for op in bodies}
    for repeat in range(args.repeats):
        for op, (qids, items) in bodies.items():
            row: dict[str, Any] = {"repeat": repeat}
            for side in ("ours", "tool") if repeat % 2 == 0 else ("tool", "ours"):
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
                    theirs = run_tool(tool, folder, backend.url, op)
                    row["tool"] = {
                        "p50": theirs["service_time"]["50_0"],
                        "p99": theirs["service_time"]["99_0"],
                        "throughput": theirs["throughput"]["mean"],
                        "error_rate": theirs["error_rate"],
                        "command": theirs["command"],
                    }
                shown = {k: v for k, v in row[side].items() if k != "command"}
                print(
                    f"  {op} repeat {repeat + 1} {side}: {json.dumps(shown)} ({time.monotonic() - began:.0f} s)"
                )
            figures[op].append(row)
    return figures


def _rows(figures: dict[str, list[dict[str, Any]]]) -> list[Row]:
    rows = []
    for op, repeats in figures.items():
        for key, label, target, lower in (
            ("p50", "service p50 ms", "<= 1.10x", True),
            ("p99", "service p99 ms", "<= 1.10x", True),
            ("throughput", "throughput req/s", ">= 0.90x", False),
        ):
            ours = [r["ours"][key] for r in repeats]
            theirs = [r["tool"][key] for r in repeats]
            ratio = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
            met = ratio <= 1.10 if lower else ratio >= 0.90
            ours_s, theirs_s = f"{statistics.median(ours):.2f}", f"{statistics.median(theirs):.2f}"
            rows.append(Row(f"{op}: {label}", ours_s, theirs_s, ratio, target, met))
    return rows


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    tool = TOOLS[args.engine]
    if args.setup:
        setup(tool)
        return 0
    if not tool.executable.is_file():
        raise SystemExit(
            f"no {tool.name} in {tool.venv}: run `python bench/load.py --engine {args.engine} --setup`"
        )
    version = subprocess.run([str(tool.executable), "--version"], capture_output=True, text=True)
    print(
        f"cpus {os.cpu_count()}, load average {os.getloadavg()}, {version.stdout.strip() or version.stderr.strip()}"
    )
    cache = EmbeddingCache()
    embedder = CachedEmbedder(build_encoder(resolve_model("minilm"), cache=cache), cache)
    wanted = [o.strip() for o in args.operations.split(",") if o.strip()]
    with engine(args.engine) as (backend, description), tempfile.TemporaryDirectory() as tmp:
        print(f"engine: {description}")
        status = rest_root(backend.url)
        if status != 200:
            raise SystemExit(
                f"{tool.name} reads the cluster's version from GET /, which {backend.url} answers with HTTP {status} "
                "(the stripped Elasticsearch build has no rest-root module): point ES_URL at a full Elasticsearch, "
                "or compare on OpenSearch (--engine opensearch)"
            )
        build_index(backend, embedder)
        bodies = {k: v for k, v in query_bodies(backend, embedder).items() if k in wanted}
        folder = Path(tmp) / "workload"
        write_workload(tool, folder, bodies, args)
        figures = _measure(tool, backend, folder, bodies, args)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    print(f"\n{tool.name} command (per operation): {figures[wanted[0]][0]['tool']['command']}")
    title = (
        f"ours / {tool.name} {tool.version}, {args.clients} client(s), {args.duration} s after {args.warmup} s "
        f"warm-up, median of {args.repeats} paired ratios"
    )
    print_summary(title, rows=_rows(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
