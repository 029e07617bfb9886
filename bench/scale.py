"""R2MED's size end to end, on a synthetic corpus of its shape (issue 17): embed, index, query.

    python bench/scale.py [--fraction 0.1] [--embed-backend openvino] [--workdir DIR]

The corpus is ``bench/_synth.py``'s: 8 datasets, 876 queries, about 357K documents
of SciFact-like length at ``--fraction 1`` (the default 0.1 keeps every query and
a tenth of each dataset's documents). Each stage runs in its own process, so
its peak RSS is its own, against one Elasticsearch (``ES_URL``, or a managed node
named ``bench`` on a free port, stopped at the end), whose resident memory is
sampled while each stage runs:

1. ``embed``: every document through ``CachedEmbedder`` on ``--embed-backend``,
   into an empty embedding cache of this run (model load timed apart);
2. ``index``: ``build_index`` for the 8 datasets (BM25 text, HNSW vectors); the
   vectors come from stage 1's cache, so this is loading and graph building;
3. ``query-lexical``, ``query-vector``, ``query-hybrid``: ``harness run`` of each
   mode over the 8 datasets (query embedding, msearch, fusion, ranx scoring,
   run directory), exactly as the CLI runs it.

The GPU stage (the whole corpus's embedding on a CUDA device, with a bge-base-class
model of random weights) is ``bench/scale_gpu.py``; it needs a machine with a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _synth

HERE = Path(__file__).resolve().parent
ARMS = ("lexical", "vector", "hybrid")


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


# ------------------------------------------------------------------ stages (children)


def _embedder(workdir: Path, backend: str) -> Any:
    from indexer.embed import CachedEmbedder, EmbeddingCache, Encoder, resolve_model

    return CachedEmbedder(
        Encoder(resolve_model("minilm"), backend=backend), EmbeddingCache(workdir / "cache")
    )


def _datasets(workdir: Path) -> list[Any]:
    from indexer.data import load_dataset

    return [load_dataset(str(workdir / "data" / name)) for name, _, _ in _synth.R2MED_SHAPE]


def stage_embed(workdir: Path, backend: str, url: str) -> dict[str, Any]:
    from indexer.embed import document_text

    embedder = _embedder(workdir, backend)
    started = time.perf_counter()
    embedder.encoder.load()
    load_s = time.perf_counter() - started
    docs = 0
    for ds in _datasets(workdir):
        pairs = ((d.id, document_text(d.title, d.text)) for d in ds.iter_corpus())
        for ids, _ in embedder.embed_documents(
            pairs, progress=True, total=ds.corpus_size, description=ds.name
        ):
            docs += len(ids)
    stats = embedder.stats
    return {
        "items": docs,
        "seconds": stats.seconds,
        "rate": docs / stats.seconds,
        "load_s": load_s,
        "model_calls": stats.model_calls,
        "cache_hits": stats.cache_hits,
        "numerics": embedder.spec.numerics,
    }


def stage_index(workdir: Path, backend: str, url: str) -> dict[str, Any]:
    from indexer import ConnectionSettings, IndexOptions, build_index, connect

    client = connect(
        ConnectionSettings.resolve() if os.environ.get("ES_URL") else ConnectionSettings(url=url)
    )
    embedder = _embedder(workdir, backend)
    docs, seconds = 0, 0.0
    for ds in _datasets(workdir):
        summary = build_index(client, ds, [embedder], IndexOptions(progress=True))
        docs += summary.docs
        seconds += summary.seconds
    return {
        "items": docs,
        "seconds": seconds,
        "rate": docs / seconds,
        "model_calls": embedder.stats.model_calls,  # 0: every vector came from the embed stage's cache
        "cache_hits": embedder.stats.cache_hits,
    }


def stage_query(workdir: Path, backend: str, url: str, arm: str) -> dict[str, Any]:
    from harness.experiment import experiment
    from harness.run import run
    from indexer import ConnectionSettings

    settings = ConnectionSettings.resolve() if os.environ.get("ES_URL") else ConnectionSettings(url=url)
    names = tuple(str(workdir / "data" / name) for name, _, _ in _synth.R2MED_SHAPE)
    config = experiment(
        values={
            "mode": arm,
            "data.datasets": list(names),
            "embedding.backend": backend,
            "output.dir": str(workdir / "runs" / arm),
            "output.records": ["jsonl"],
            "output.quiet": True,
        }
    )
    started = time.perf_counter()
    _, results = run(config, settings)
    wall = time.perf_counter() - started
    arms = [d.arms[arm] for d in results.datasets.values()]
    queries = sum(a.queries for a in arms)
    return {
        "items": queries,
        "seconds": wall,
        "rate": queries / wall,
        "search_s": sum(a.queries / a.qps for a in arms if a.qps),
        "ndcg@10_mean": sum(a.metrics["ndcg@10"] for a in arms) / len(arms),
    }


STAGES = {
    "embed": stage_embed,
    "index": stage_index,
    **{f"query-{arm}": (lambda w, b, u, arm=arm: stage_query(w, b, u, arm)) for arm in ARMS},
}


# ------------------------------------------------------------------ orchestration (parent)


@contextmanager
def engine_rss(client: Any) -> Iterator[dict[str, float]]:
    """Sample the engine process's resident memory every half second; yields {'peak_mib': ...}."""
    import psutil

    found: dict[str, float] = {"peak_mib": 0.0}
    try:
        info = client.nodes.info(metric="process")["nodes"]
        process = psutil.Process(int(next(iter(info.values()))["process"]["id"]))
    except Exception:  # a remote cluster: no local process to watch
        found["peak_mib"] = float("nan")
        yield found
        return
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                found["peak_mib"] = max(found["peak_mib"], process.memory_info().rss / 2**20)
            except psutil.Error:
                return
            stop.wait(0.5)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        stop.set()
        thread.join()


def run_stage(name: str, workdir: Path, backend: str, url: str, client: Any) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--stage",
        name,
        "--workdir",
        str(workdir),
        "--embed-backend",
        backend,
    ]
    print(f"== stage {name}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    with engine_rss(client) as engine_mem:
        done = subprocess.run([*command, "--url", url], stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"stage {name} failed with exit code {done.returncode}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result.update(
        stage=name, wall_s=time.perf_counter() - started, engine_peak_rss_mib=engine_mem["peak_mib"]
    )
    return result


def print_table(results: list[dict[str, Any]], fraction: float, backend: str) -> None:
    print(
        f"\nscale: synthetic R2MED shape at fraction {fraction} "
        f"({results[0]['items'] if results else 0:,} documents, 876 queries), embed backend {backend}"
    )
    print(
        f"  {'stage':<14} {'items':>8} {'seconds':>9} {'per second':>11} {'peak RSS (stage)':>17} "
        f"{'engine peak RSS':>16}  notes"
    )
    for r in results:
        notes = {
            "embed": f"{r.get('numerics')}; model load {r.get('load_s', 0):.1f}s apart",
            "index": f"model calls {r.get('model_calls')} (vectors from the embed stage's cache)",
        }.get(r["stage"], f"search {r.get('search_s', 0):.1f}s; mean nDCG@10 {r.get('ndcg@10_mean', 0):.3f}")
        unit = "docs/s" if r["stage"] in ("embed", "index") else "q/s"
        print(
            f"  {r['stage']:<14} {r['items']:>8,} {r['seconds']:>9.1f} {r['rate']:>8.1f} {unit:<6}"
            f"{r['peak_rss_mib']:>12.0f} MiB {r['engine_peak_rss_mib']:>12.0f} MiB  {notes}"
        )
    by_stage = {r["stage"]: r for r in results}
    if fraction < 1 and "embed" in by_stage and "index" in by_stage:
        full = sum(n for _, _, n in _synth.R2MED_SHAPE)
        embed_h = full / by_stage["embed"]["rate"] / 3600
        index_h = full / by_stage["index"]["rate"] / 3600
        print(
            f"  linear projection to all {full:,} documents on this machine: embed {embed_h:.1f} h, index "
            f"{index_h:.1f} h (HNSW building grows a little faster than linearly)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fraction", type=float, default=0.1, help="share of each dataset's documents")
    parser.add_argument(
        "--embed-backend", default="openvino", help="the backend of the embed stage (and queries)"
    )
    parser.add_argument(
        "--stages", default=",".join(STAGES), help=f"comma-separated among {', '.join(STAGES)}"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="keep corpus, cache and runs here")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--stage", default=None, help=argparse.SUPPRESS)  # child: run one stage
    parser.add_argument("--url", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.stage:
        result = STAGES[args.stage](args.workdir, args.embed_backend, args.url)
        result["peak_rss_mib"] = _peak_rss_mib()
        print(json.dumps(result))
        return 0
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    from _common import engine

    with tempfile.TemporaryDirectory(prefix="bench-scale-") as scratch:
        workdir = args.workdir or Path(scratch)
        if not (workdir / "data").is_dir():
            started = time.perf_counter()
            _synth.write_beir(workdir / "data", args.fraction)
            print(
                f"corpus written in {time.perf_counter() - started:.1f}s under {workdir / 'data'}",
                file=sys.stderr,
            )
        results = []
        with engine() as es:
            print(f"engine: {es.description}; {os.cpu_count()} CPUs; load {os.getloadavg()}", file=sys.stderr)
            for name in stages:
                results.append(run_stage(name, workdir, args.embed_backend, es.url, es.client))
                print(json.dumps(results[-1]), file=sys.stderr)
        print_table(results, args.fraction, args.embed_backend)
        print("  GPU stage (bench/scale_gpu.py): not run here; it needs a CUDA device")
        if args.json:
            args.json.write_text(json.dumps({"fraction": args.fraction, "stages": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
