"""Embedding benchmarks on real SciFact abstracts.

    python bench/embedding.py                      # (e) backends: docs/s, ratio to torch fp32, peak RSS, cosine
    python bench/embedding.py --only ndcg          # (f) vector-arm nDCG@10 on SciFact test per backend
    python bench/embedding.py --only auto          # (g) what --embed-backend auto decides here, and why
    python bench/embedding.py --only build         # (h) the build path: embedding beside bulk loading, threads
    python bench/embedding.py --only cache,batching [--docs 1000] [--cache-docs N] [--batch-size 32]
    python bench/embedding.py --backends onnx,openvino/fp32   # NAME[/PRECISION], as --embed-backend takes

(b) the embedding cache, cold against warm; (d) length-sorted against unsorted
batches (issue 4); (e) every embedding backend against torch fp32 on the same
documents, each measured in its own process (so peak RSS is its own), in
alternating order, with the headline ratio the median of paired per-repeat
ratios; (f) the vector arm of ``harness run vector`` on the SciFact sample per
backend (issue 17); (g) the decision ``--embed-backend auto`` makes on this machine,
made afresh (not read from the machine's record), with every candidate's check; (h)
``build_index`` on a managed engine with cold embeddings: its wall time against
embedding alone plus loading alone (how much of the loading the embedding hides),
at one thread and at the default (issue 21).

Importable: ``bench_cache``, ``bench_batching``, ``bench_backends`` and
``bench_ndcg`` return dicts of the figures (``bench/index.py`` prints b and d
with its own). Model loading (and ONNX export) is done before any clock starts,
so no throughput figure includes it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
from _common import Row, median, print_summary

from base import progress as show_progress
from indexer.embed import (
    NDCG_TOLERANCE,
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    batch_order,
    document_text,
    resolve_model,
)

SCIFACT_CORPUS = (
    Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"
)
CACHE_TARGET = 20.0


def load_docs(n: int, corpus: Path = SCIFACT_CORPUS) -> list[tuple[str, str]]:
    """The first ``n`` documents of a BEIR corpus as ``(id, title + text)``."""
    with corpus.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in islice(handle, n)]
    if len(rows) < n:
        raise SystemExit(f"{corpus} has {len(rows)} documents, {n} were asked for")
    return [(row["_id"], document_text(row.get("title"), row.get("text"))) for row in rows]


BACKENDS = ("torch", "onnx", "onnx-int8", "openvino")
INT8_TARGET = 2.5  # onnx-int8 docs/s over torch fp32
COSINE_TARGET = 0.99


def _file_name(backend: str) -> str:
    return backend.replace("/", "-")


def _loaded_encoder(spec: ModelSpec, device: str | None, batch_size: int) -> Encoder:
    encoder = Encoder(spec, device=device, batch_size=batch_size)
    encoder.load()
    encoder.encode(["warm-up"])  # first-call overhead stays out of every timing
    return encoder


def _run(embedder: CachedEmbedder, docs: list[tuple[str, str]], progress: bool, label: str) -> np.ndarray:
    parts = [
        vectors
        for _, vectors in embedder.embed_documents(
            docs, progress=progress, total=len(docs), description=label
        )
    ]
    return np.concatenate(parts)


def bench_cache(
    docs: int = 1000,
    *,
    model: str = "minilm",
    batch_size: int = 32,
    device: str | None = None,
    corpus: Path = SCIFACT_CORPUS,
    progress: bool = True,
) -> dict[str, Any]:
    """Figure (b): embed ``docs`` abstracts into a fresh cache (cold), then again from a new
    embedder on the same cache (warm, as a re-run would). Model calls are counted."""
    spec = resolve_model(model)
    pairs = load_docs(docs, corpus)
    encoder = _loaded_encoder(spec, device, batch_size)
    with tempfile.TemporaryDirectory(prefix="bench-embed-cache-") as folder:
        started = time.perf_counter()
        cold = CachedEmbedder(encoder, EmbeddingCache(folder))
        calls_before = encoder.stats.model_calls
        cold_vectors = _run(cold, pairs, progress, "cold")
        cold_s = time.perf_counter() - started
        cold_calls = encoder.stats.model_calls - calls_before

        started = time.perf_counter()
        warm = CachedEmbedder(Encoder(spec, device=device, batch_size=batch_size), EmbeddingCache(folder))
        warm_vectors = _run(warm, pairs, progress, "warm")
        warm_s = time.perf_counter() - started
        assert cold.cache is not None and warm.cache is not None
        cold.cache.close()
        warm.cache.close()
    speedup = cold_s / warm_s if warm_s > 0 else float("inf")
    return {
        "figure": "b",
        "docs": docs,
        "model": spec.model_id,
        "device": encoder.device,
        "cold_s": cold_s,
        "cold_docs_per_s": docs / cold_s,
        "cold_model_calls": cold_calls,
        "warm_s": warm_s,
        "warm_docs_per_s": docs / warm_s if warm_s > 0 else float("inf"),
        "warm_model_calls": warm.stats.model_calls,
        "warm_cache_hits": warm.stats.cache_hits,
        "warm_model_loaded": warm.encoder.loaded,
        "identical_vectors": bool(np.array_equal(cold_vectors, warm_vectors)),
        "speedup": speedup,
        "target": CACHE_TARGET,
        "passed": speedup >= CACHE_TARGET and warm.stats.model_calls == 0,
    }


def _padding(encoder: Encoder, texts: list[str], sort_by_length: bool) -> tuple[int, int]:
    """(real tokens, padded tokens) over the batches ``encoder`` forms for ``texts``."""
    lengths = encoder.text_lengths(texts)
    order = batch_order(lengths, sort_by_length=sort_by_length)
    real = padded = 0
    for start in range(0, len(texts), encoder.batch_size):
        batch = lengths[order[start : start + encoder.batch_size]]
        real += int(batch.sum())
        padded += int(batch.max()) * len(batch)
    return real, padded


def bench_batching(
    docs: int = 1000,
    *,
    model: str = "minilm",
    batch_size: int = 32,
    device: str | None = None,
    corpus: Path = SCIFACT_CORPUS,
    progress: bool = True,
    rounds: int = 4,
) -> dict[str, Any]:
    """Figure (d): throughput of length-sorted against input-order batches on the same abstracts.

    The documents are split into ``rounds`` slices; each slice is encoded both
    ways, alternating which goes first, so a change in machine load during the
    run hits both sides alike. Sorting happens within a slice (the embedder
    sorts within its windows the same way).
    """
    spec = resolve_model(model)
    texts = [text for _, text in load_docs(docs, corpus)]
    encoder = _loaded_encoder(spec, device, batch_size)
    slices = [texts[i::rounds] for i in range(rounds)] if rounds > 1 else [texts]
    modes = {"sorted": True, "unsorted": False}
    seconds = dict.fromkeys(modes, 0.0)
    calls = dict.fromkeys(modes, 0)
    real_tokens, padded_tokens = dict.fromkeys(modes, 0), dict.fromkeys(modes, 0)
    vectors: dict[str, list[np.ndarray]] = {name: [] for name in modes}
    with show_progress("sorted and unsorted batches", 2 * len(texts), unit="docs", enabled=progress) as bar:
        for number, part in enumerate(slices):
            order = list(modes) if number % 2 == 0 else list(reversed(modes))
            for name in order:
                encoder.sort_by_length = modes[name]
                on_batch = bar.advance
                calls_before = encoder.stats.model_calls
                started = time.perf_counter()
                vectors[name].append(encoder.encode(part, prompt=spec.document_prompt, on_batch=on_batch))
                seconds[name] += time.perf_counter() - started
                calls[name] += encoder.stats.model_calls - calls_before
                real, padded = _padding(encoder, part, modes[name])
                real_tokens[name] += real
                padded_tokens[name] += padded
    result: dict[str, Any] = {
        "figure": "d",
        "docs": docs,
        "model": spec.model_id,
        "device": encoder.device,
        "batch_size": batch_size,
        "rounds": len(slices),
        "max_seq_length": encoder.max_seq_length,
    }
    for name in modes:
        result[f"{name}_s"] = seconds[name]
        result[f"{name}_docs_per_s"] = len(texts) / seconds[name]
        result[f"{name}_model_calls"] = calls[name]
        result[f"{name}_padding_efficiency"] = real_tokens[name] / padded_tokens[name]
    result["speedup"] = result["sorted_docs_per_s"] / result["unsorted_docs_per_s"]
    result["max_abs_diff"] = float(
        np.abs(np.concatenate(vectors["sorted"]) - np.concatenate(vectors["unsorted"])).max()
    )
    return result


# ---------------------------------------------------------------- (e) backends


def _peak_rss_mib() -> float:
    """This process's peak resident set (VmHWM of its own address space, so not its parent's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _flops(lengths: np.ndarray, order: np.ndarray, batch_size: int, config: dict[str, Any]) -> float:
    """Multiply-adds x 2 of the transformer over the padded batches (embeddings and pooling left out)."""
    h, i, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    total = 0.0
    for start in range(0, len(order), batch_size):
        batch = lengths[order[start : start + batch_size]]
        seq, n = int(batch.max()), len(batch)
        total += n * seq * layers * (2 * (4 * h * h + 2 * h * i) + 4 * seq * h)
    return total


def serve_backend(
    backend: str, docs: int, batch_size: int, slices: int, corpus: Path = SCIFACT_CORPUS
) -> None:
    """A measurement process for one backend, driven over stdin/stdout (one JSON line per answer).

    It loads the model and warms up (untimed), answers ``ready``, then for each line ``encode S``
    encodes slice ``S`` (every ``slices``-th document from ``S``) and answers the seconds; on ``done``
    it profiles the tokenizer over the same batches, saves every vector (input order) and answers
    its peak RSS and the work done.
    """
    texts = [text for _, text in load_docs(docs, corpus)]
    spec = resolve_model("minilm")
    started = time.perf_counter()
    encoder = Encoder(spec, device="cpu", backend=backend, batch_size=batch_size)
    model = encoder.load()
    encoder.encode(texts[:batch_size])  # warm-up: first-call allocations and kernel choices
    answer = {"ready": True, "load_s": time.perf_counter() - started, "precision": encoder.spec.precision}
    print(json.dumps(answer), flush=True)
    config = json.loads((Path(spec.path_or_name) / "config.json").read_text())
    vectors = np.zeros((docs, encoder.dims), dtype=np.float32)
    flops = 0.0
    for line in sys.stdin:
        command = line.split()
        if command[0] == "encode":
            index = np.arange(int(command[1]), docs, slices)
            part = [texts[i] for i in index]
            started = time.perf_counter()
            vectors[index] = encoder.encode_documents(part)
            seconds = time.perf_counter() - started
            lengths = encoder.text_lengths(part)
            flops += _flops(lengths, batch_order(lengths, sort_by_length=True), batch_size, config)
            print(json.dumps({"seconds": seconds, "docs": len(part)}), flush=True)
        elif command[0] == "done":
            np.save(command[1], vectors)
            tokenizer_s = 0.0
            for first in range(slices):
                part = [texts[i] for i in range(first, docs, slices)]
                order = batch_order(encoder.text_lengths(part), sort_by_length=True)
                started = time.perf_counter()
                for start in range(0, len(part), batch_size):
                    batch = [part[i] for i in order[start : start + batch_size]]
                    model.tokenizer(
                        batch,
                        padding=True,
                        truncation=True,
                        max_length=model.max_seq_length,
                        return_tensors="np",
                    )
                tokenizer_s += time.perf_counter() - started
            real, padded = _padding(encoder, texts, True)
            summary = {
                "peak_rss_mib": _peak_rss_mib(),
                "tokenizer_s": tokenizer_s,
                "flops": flops,
                "padding_efficiency": real / padded,
            }
            print(json.dumps(summary), flush=True)
            return


class _Worker:
    def __init__(self, backend: str, docs: int, batch_size: int, slices: int) -> None:
        command = [sys.executable, __file__, "--serve", backend, "--docs", str(docs)]
        command += ["--batch-size", str(batch_size), "--slices", str(slices)]
        self.backend = backend
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.hello = self.read()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.backend} worker died (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.read()


def bench_backends(
    docs: int = 1000,
    *,
    backends: tuple[str, ...] = BACKENDS,
    batch_size: int = 32,
    repeats: int = 2,
    slices: int = 4,
) -> dict[str, Any]:
    """Figure (e): one measurement process per backend (so each peak RSS is its own), loaded before any
    clock starts; the documents are split into ``slices`` interleaved slices, and for every slice of
    every repeat each backend encodes it in turn, the order rotating, so a pair of figures is seconds
    apart and a change in machine load hits both. Headline ratio: median of the paired per-slice ratios."""
    for backend in backends:  # one untimed pass each: exports the ONNX graphs if they are not cached yet
        Encoder(resolve_model("minilm"), device="cpu", backend=backend).load()
    workers = {b: _Worker(b, docs, batch_size, slices) for b in backends}
    seconds: dict[str, list[list[float]]] = {b: [[] for _ in range(repeats)] for b in backends}
    try:
        step = 0
        for r in range(repeats):
            for part in range(slices):
                order = list(backends[step % len(backends) :] + backends[: step % len(backends)])
                step += 1
                for backend in order:
                    seconds[backend][r].append(workers[backend].ask(f"encode {part}")["seconds"])
                print(
                    f"    repeat {r + 1}/{repeats} slice {part + 1}/{slices}: "
                    + ", ".join(f"{b} {seconds[b][r][-1]:.1f}s" for b in backends),
                    file=sys.stderr,
                )
        with tempfile.TemporaryDirectory(prefix="bench-backends-") as folder:
            summaries, vectors = {}, {}
            for backend, worker in workers.items():
                out = Path(folder) / f"{_file_name(backend)}.npy"
                summaries[backend] = worker.ask(f"done {out}")
                vectors[backend] = np.load(out)
    finally:
        for worker in workers.values():
            if worker.process.poll() is None:
                worker.process.kill()
            worker.process.wait()
    reference = vectors["torch"]
    rows: dict[str, dict[str, Any]] = {}
    for backend in backends:
        paired = [
            t / b
            for tr, br in zip(seconds["torch"], seconds[backend], strict=True)
            for t, b in zip(tr, br, strict=True)
        ]
        totals = [sum(x) for x in seconds[backend]]
        cosines = (vectors[backend] * reference).sum(axis=1)
        summary = summaries[backend]
        rows[backend] = {
            "precision": workers[backend].hello["precision"],
            "docs_per_s": [docs / t for t in totals],
            "paired_ratios": paired,
            "ratio": statistics.median(paired),
            "ratio_of_medians": statistics.median(docs / t for t in totals)
            / statistics.median(docs / sum(x) for x in seconds["torch"]),
            "peak_rss_mib": [summary["peak_rss_mib"]],
            "mean_cosine": float(cosines.mean()),
            "min_cosine": float(cosines.min()),
            "tokenizer_share": summary["tokenizer_s"] / (sum(totals) / repeats),
            "gflop_per_s": summary["flops"] / sum(totals) / 1e9,
            "padding_efficiency": summary["padding_efficiency"],
            "load_s": workers[backend].hello["load_s"],
        }
    return {
        "figure": "e",
        "docs": docs,
        "batch_size": batch_size,
        "repeats": repeats,
        "slices": slices,
        "backends": rows,
        "seconds": seconds,
    }


def print_backends(r: dict[str, Any]) -> None:
    print(
        f"(e) backends: {r['docs']:,} SciFact docs, all-MiniLM-L6-v2, batch size {r['batch_size']}, "
        f"{r['repeats']} repeat(s) x {r['slices']} interleaved slices, backends in rotating order, "
        "one process per backend"
    )
    header = (
        f"    {'backend':<14} {'prec':<5} {'docs/s (median, min-max)':<26} {'vs torch':>8}  "
        f"{'paired ratios':<20} {'peak RSS':>9} {'mean cos':>9} {'min cos':>8} {'GFLOP/s':>8} {'tokenizer':>9}"
    )
    print(header)
    for name, b in r["backends"].items():
        rates = b["docs_per_s"]
        print(
            f"    {name:<14} {b['precision']:<5} {f'{median(rates):.1f} ({min(rates):.1f}-{max(rates):.1f})':<26} "
            f"{b['ratio']:7.2f}x  {' '.join(f'{x:.2f}' for x in b['paired_ratios']):<20} "
            f"{median(b['peak_rss_mib']):6.0f} MiB {b['mean_cosine']:9.5f} {b['min_cosine']:8.5f} "
            f"{b['gflop_per_s']:8.1f} {b['tokenizer_share']:8.1%}"
        )
    print(
        "    vs torch: median of the paired per-slice ratios (torch seconds / backend seconds); GFLOP/s: transformer "
        "FLOPs over padded batches per second; tokenizer: its time as a share of the encode time"
    )


# ------------------------------------------------------------------- (f) nDCG


def _exact_ndcg(embedder: CachedEmbedder, dataset: Any, depth: int = 100) -> float:
    """nDCG@10 of exact (brute-force) cosine search over the same vectors: numerics without HNSW noise."""
    from harness.eval import evaluate

    pairs = [(d.id, document_text(d.title, d.text)) for d in dataset.iter_corpus()]
    ids = [i for i, _ in pairs]
    docs = np.concatenate([v for _, v in embedder.embed_documents(pairs)])
    qids = sorted(dataset.queries)
    queries = embedder.embed_queries([dataset.queries[q] for q in qids])
    scores = queries @ docs.T
    top = np.argsort(-scores, axis=1)[:, :depth]
    run = {q: {ids[j]: float(scores[n, j]) for j in top[n]} for n, q in enumerate(qids)}
    return float(evaluate(dataset.qrels, run, ("ndcg@10",)).mean("ndcg@10"))


def _scifact_copy(folder: Path, docs: int | None = None) -> Path:
    """The SciFact files under another folder name: a dataset (and so an index) of its own; with ``docs``,
    only the first ``docs`` documents."""
    source = SCIFACT_CORPUS.parent
    (folder / "qrels").mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        if name == "corpus.jsonl" and docs is not None:
            with (source / name).open(encoding="utf-8") as handle:
                (folder / name).write_text("".join(islice(handle, docs)), encoding="utf-8")
        else:
            (folder / name).symlink_to(source / name)
    return folder


def bench_ndcg(backends: tuple[str, ...] = BACKENDS, *, progress: bool = True) -> dict[str, Any]:
    """Figure (f): ``harness run vector --embed-backend B`` on SciFact test, per backend, on one engine.

    Each backend runs on its own copy of SciFact (same files, another dataset name, so its own index),
    so the documents are embedded by that backend, and so are the 300 test queries. Vectors go through
    the shared embedding cache (vectors it already holds are reused). Also the exact-search nDCG@10 of
    the same vectors, which separates the numerics from HNSW's approximation.
    """
    from _common import engine

    from harness.experiment import experiment
    from harness.run import run
    from indexer import ConnectionSettings, load_dataset

    rows: dict[str, dict[str, Any]] = {}
    with engine() as es, tempfile.TemporaryDirectory(prefix="bench-ndcg-") as folder:
        settings = (
            ConnectionSettings.resolve() if os.environ.get("ES_URL") else ConnectionSettings(url=es.url)
        )
        print(f"engine: {es.description}", file=sys.stderr)
        for backend in backends:
            data = _scifact_copy(Path(folder) / f"scifact-{_file_name(backend)}")
            config = experiment(
                values={
                    "mode": "vector",
                    "data.datasets": [str(data)],
                    "embedding.backend": backend,
                    "output.dir": str(Path(folder) / "runs" / _file_name(backend)),
                    "output.records": ["jsonl"],
                    "output.quiet": not progress,
                }
            )
            _, results = run(config, settings)
            result = results.datasets[data.name]
            arm = result.arms["vector"]
            embedder = CachedEmbedder(Encoder(resolve_model("minilm"), backend=backend), EmbeddingCache())
            rows[backend] = {
                "numerics": embedder.spec.numerics,
                "precision": embedder.spec.precision,
                "ndcg@10": arm.metrics["ndcg@10"],
                "recall@100": arm.metrics["recall@100"],
                "ci95": list(arm.ci95["ndcg@10"]),
                "exact_ndcg@10": _exact_ndcg(embedder, load_dataset(str(data))),
                "embed_s": result.timings.get("index_embed_s", 0.0),
            }
            print(f"    {backend}: nDCG@10 {rows[backend]['ndcg@10']:.4f}", file=sys.stderr)
    for row in rows.values():
        row["delta"] = row["ndcg@10"] - rows["torch"]["ndcg@10"]
        row["exact_delta"] = row["exact_ndcg@10"] - rows["torch"]["exact_ndcg@10"]
        row["within_tolerance"] = abs(row["delta"]) <= NDCG_TOLERANCE
    return {"figure": "f", "backends": rows, "tolerance": NDCG_TOLERANCE}


def print_ndcg(r: dict[str, Any]) -> None:
    print(
        "(f) vector arm, SciFact test (300 queries, 5,183 docs), one index per backend on the same engine; "
        f"auto may choose numerics within {r['tolerance']} of torch fp32 (indexer.embed.SAMPLE_NDCG)"
    )
    print(
        f"    {'backend':<14} {'prec':<5} {'nDCG@10 [95% CI]':<26} {'Δ torch':>8} {'R@100':>7} "
        f"{'exact nDCG@10':>13} {'Δ torch':>8} {'doc embed s':>12}"
    )
    for name, b in r["backends"].items():
        ci = f"{b['ndcg@10']:.4f} [{b['ci95'][0]:.3f},{b['ci95'][1]:.3f}]"
        print(
            f"    {name:<14} {b['precision']:<5} {ci:<26} {b['delta']:+8.4f} {b['recall@100']:7.4f} "
            f"{b['exact_ndcg@10']:13.4f} {b['exact_delta']:+8.4f} {b['embed_s']:12.1f}"
        )


# ------------------------------------------------------------------- (g) auto


def bench_auto(model: str = "minilm") -> dict[str, Any]:
    """Figure (g): the decision ``--embed-backend auto`` makes here, made afresh into a scratch record
    (the machine's own record is neither read nor changed), with each candidate's check."""
    from indexer.embed import CPU_CANDIDATES, SAMPLE_NDCG, choose_numerics, cpu_flags

    spec = resolve_model(model)
    encoder = Encoder(spec, device="cpu", backend="auto")
    with tempfile.TemporaryDirectory(prefix="bench-auto-") as folder:
        started = time.perf_counter()
        choice = choose_numerics(spec, "cpu", encoder._checker("cpu"), path=Path(folder) / "auto.json")
        seconds = time.perf_counter() - started
    flags = sorted({f for c in CPU_CANDIDATES for f in c.needs} & cpu_flags())
    return {
        "figure": "g",
        "model": spec.model_id,
        "flags": flags,
        "numerics": choice.numerics,
        "reason": choice.reason,
        "trials": [dataclasses.asdict(t) for t in choice.trials],
        "sample_ndcg": dict(SAMPLE_NDCG),
        "seconds": seconds,
    }


def print_auto(r: dict[str, Any]) -> None:
    print(
        f"(g) --embed-backend auto on this machine ({', '.join(r['flags']) or 'no listed CPU flags'}), {r['model']}"
    )
    print(f"    {'candidate':<16} {'sample nDCG@10':>14} {'min cos':>8} {'vs torch':>8}  verdict")
    for t in r["trials"]:
        ndcg = r["sample_ndcg"].get(t["numerics"])
        cos = f"{t['min_cosine']:.5f}" if t["min_cosine"] is not None else "-"
        speed = f"{t['speedup']:.2f}x" if t["speedup"] is not None else "-"
        print(
            f"    {t['numerics']:<16} {f'{ndcg:.4f}' if ndcg else '-':>14} {cos:>8} {speed:>8}  {t['verdict']}"
        )
    print(f"    chosen: {r['numerics']} (decided in {r['seconds']:.1f} s, once per machine): {r['reason']}")


# ------------------------------------------------------------------ (h) build


#: documents per build step in (h): a quarter of build_index's default, so 1,000 documents are 4 steps, as
#: the sample's 5,183 are 6 at the default (only the last step's loading cannot be hidden)
BUILD_WINDOW = 256


def _build_once(es: Any, data: Path, backend: str, threads: int | None, cache_dir: Path) -> dict[str, float]:
    """One cold ``build_index`` (fresh index, empty embedding cache) and its phases."""
    from indexer import load_dataset
    from indexer._build import IndexOptions, build_index

    dataset = load_dataset(str(data))
    for name in es.backend.list_indices(f"r2med-{dataset.name}*"):
        es.backend.delete_index(name.name)
    spec = resolve_model("minilm")
    encoder = Encoder(spec, device="cpu", backend=backend, threads=threads)
    encoder.load()  # model load and export outside every clock
    encoder.encode(["warm-up"])
    with EmbeddingCache(cache_dir) as cache:
        started = time.perf_counter()
        options = IndexOptions(progress=False, window=BUILD_WINDOW)
        summary = build_index(es.backend, dataset, [CachedEmbedder(encoder, cache)], options)
        wall = time.perf_counter() - started
    return {"wall_s": wall, "embed_s": summary.embed_seconds}


def bench_build(
    docs: int = 1000, *, backend: str = "auto", repeats: int = 1, progress: bool = False
) -> dict[str, Any]:
    """Figure (h): ``build_index`` of ``docs`` SciFact documents from cold embeddings, at 1 and 2 threads
    and the default (:func:`indexer.embed.embed_threads`); beside it the same build from a warm cache (loading
    alone). Hidden share: how much of the loading went on while embedding, 1 - (wall - embed) / load
    (negative: embedding and the engine slowed each other more than the overlap gained)."""
    from _common import engine

    from indexer.embed import embed_threads

    counts = sorted({1, 2, embed_threads()})
    threads = {f"{n} thread{'s' * (n > 1)}{' (default)' * (n == embed_threads())}": n for n in counts}
    rows: dict[str, list[dict[str, float]]] = {k: [] for k in threads}
    load_s: list[float] = []
    with engine() as es, tempfile.TemporaryDirectory(prefix="bench-build-") as folder:
        data = _scifact_copy(Path(folder) / "build-bench", docs=docs)
        print(f"engine: {es.description}", file=sys.stderr)
        for r in range(repeats):
            for label, n in list(threads.items())[:: -1 if r % 2 else 1]:  # alternating which goes first
                rows[label].append(_build_once(es, data, backend, n, Path(folder) / f"cache-{r}-{n}"))
            # loading alone: the default's build again, from the cache it filled
            warm = _build_once(es, data, backend, None, Path(folder) / f"cache-{r}-{embed_threads()}")
            load_s.append(warm["wall_s"] - warm["embed_s"])
    load = statistics.median(load_s)
    summary: dict[str, dict[str, float]] = {}
    for label, runs in rows.items():
        wall = statistics.median(x["wall_s"] for x in runs)
        embed = statistics.median(x["embed_s"] for x in runs)
        summary[label] = {
            "wall_s": wall,
            "embed_s": embed,
            "hidden": 1 - (wall - embed) / load if load else 0.0,
        }
    numerics = Encoder(resolve_model("minilm"), device="cpu", backend=backend).spec.numerics
    return {"figure": "h", "docs": docs, "numerics": numerics, "load_s": load, "rows": summary}


def print_build(r: dict[str, Any]) -> None:
    print(
        f"(h) build path: build_index of {r['docs']:,} SciFact docs in steps of {BUILD_WINDOW}, cold embeddings "
        f"({r['numerics']}), loading alone (warm cache) {r['load_s']:.1f} s"
    )
    print(f"    {'threads':<14} {'wall s':>8} {'embed s':>8} {'docs/s':>8} {'loading hidden':>15}")
    for label, row in r["rows"].items():
        print(
            f"    {label:<14} {row['wall_s']:8.1f} {row['embed_s']:8.1f} {r['docs'] / row['wall_s']:8.1f} "
            f"{row['hidden']:14.0%}"
        )


def print_cache(r: dict[str, Any]) -> None:
    print(f"(b) embedding cache: {r['docs']:,} SciFact docs, {r['model']} on {r['device']}")
    print(
        f"    cold: {r['cold_s']:8.2f} s  {r['cold_docs_per_s']:10,.1f} docs/s  model calls {r['cold_model_calls']}"
    )
    print(
        f"    warm: {r['warm_s']:8.3f} s  {r['warm_docs_per_s']:10,.1f} docs/s  model calls {r['warm_model_calls']}"
        f"  cache hits {r['warm_cache_hits']:,}  model loaded: {r['warm_model_loaded']}"
    )
    print(
        f"    warm speed-up: {r['speedup']:,.0f}x (target >= {r['target']:.0f}x, zero model calls)"
        f"  identical vectors: {r['identical_vectors']}  {'PASS' if r['passed'] else 'FAIL'}"
    )


def print_batching(r: dict[str, Any]) -> None:
    print(
        f"(d) batching: {r['docs']:,} SciFact docs, {r['model']} on {r['device']}, batch size {r['batch_size']},"
        f" max_seq_length {r['max_seq_length']}, {r['rounds']} alternating rounds"
    )
    for name in ("sorted", "unsorted"):
        print(
            f"    {name:>8}: {r[f'{name}_s']:8.2f} s  {r[f'{name}_docs_per_s']:8.1f} docs/s"
            f"  model calls {r[f'{name}_model_calls']}  padding efficiency {r[f'{name}_padding_efficiency']:.0%}"
        )
    print(
        f"    sorted/unsorted throughput: {r['speedup']:.2f}x  (max |diff| of vectors {r['max_abs_diff']:.1e})"
    )


FIGURES = ("backends", "ndcg", "auto", "build", "cache", "batching")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=1000, help="SciFact documents for (b), (d) and (e)")
    parser.add_argument("--cache-docs", type=int, default=None, help="documents for (b) (default: --docs)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: automatic), for (b) and (d)")
    parser.add_argument("--model", default="minilm", help="for (b) and (d)")
    parser.add_argument("--rounds", type=int, default=4, help="alternating slices for (d)")
    parser.add_argument("--repeats", type=int, default=2, help="repeats for (e), each over every document")
    parser.add_argument("--slices", type=int, default=4, help="interleaved slices per repeat for (e)")
    parser.add_argument(
        "--backends", default=",".join(BACKENDS), help="for (e) and (f); torch always included"
    )
    parser.add_argument(
        "--only", default="backends", help=f"comma-separated figures among {', '.join(FIGURES)}"
    )
    parser.add_argument("--build-docs", type=int, default=1000, help="SciFact documents for (h)")
    parser.add_argument("--build-backend", default="auto", help="--embed-backend for (h)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)  # an (e) measurement process
    args = parser.parse_args(argv)
    if args.serve:
        serve_backend(args.serve, args.docs, args.batch_size, args.slices)
        return 0
    figures = [f.strip() for f in args.only.split(",") if f.strip()]
    unknown = set(figures) - set(FIGURES)
    if unknown:
        parser.error(f"unknown figures {sorted(unknown)}: expected among {', '.join(FIGURES)}")
    backends = tuple(dict.fromkeys(["torch", *(b.strip() for b in args.backends.split(",") if b.strip())]))
    common = {"model": args.model, "batch_size": args.batch_size, "device": args.device}
    progress = not args.no_progress
    results: list[dict[str, Any]] = []
    rows = []
    if "backends" in figures:
        results.append(
            bench_backends(
                args.docs,
                backends=backends,
                batch_size=args.batch_size,
                repeats=args.repeats,
                slices=args.slices,
            )
        )
        print_backends(results[-1])
        rows += _backend_rows(results[-1])
    if "ndcg" in figures:
        results.append(bench_ndcg(backends, progress=progress))
        print_ndcg(results[-1])
        rows += _ndcg_rows(results[-1])
    if "auto" in figures:
        results.append(bench_auto(args.model))
        print_auto(results[-1])
    if "build" in figures:
        results.append(bench_build(args.build_docs, backend=args.build_backend, repeats=args.repeats))
        print_build(results[-1])
    if "cache" in figures:
        results.append(bench_cache(args.cache_docs or args.docs, progress=progress, **common))
        print_cache(results[-1])
    if "batching" in figures:
        results.append(bench_batching(args.docs, progress=progress, rounds=args.rounds, **common))
        print_batching(results[-1])
    if rows:
        print_summary("summary (issue 17 targets)", rows)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if all(r.get("passed", True) for r in results) else 1


def _backend_rows(r: dict[str, Any]) -> list[Row]:
    torch_rate = median(r["backends"]["torch"]["docs_per_s"])
    rows = []
    for name, b in r["backends"].items():
        if name == "torch":
            continue
        target = INT8_TARGET if name == "onnx-int8" else None
        rows.append(
            Row(
                f"e. {name} docs/s",
                f"{median(b['docs_per_s']):.1f}",
                f"{torch_rate:.1f} (torch fp32)",
                b["ratio"],
                f">= {INT8_TARGET}x" if target else "",
                b["ratio"] >= target if target else None,
            )
        )
        rows.append(
            Row(
                f"e. {name} mean cosine",
                f"{b['mean_cosine']:.5f}",
                "1 (torch fp32)",
                b["mean_cosine"],
                f">= {COSINE_TARGET}",
                b["mean_cosine"] >= COSINE_TARGET,
            )
        )
    return rows


def _ndcg_rows(r: dict[str, Any]) -> list[Row]:
    base = r["backends"]["torch"]["ndcg@10"]
    return [
        Row(
            f"f. {name} nDCG@10",
            f"{b['ndcg@10']:.4f}",
            f"{base:.4f} (torch fp32)",
            b["ndcg@10"] / base,
            f"|Δ| <= {NDCG_TOLERANCE}",
            abs(b["delta"]) <= NDCG_TOLERANCE,
        )
        for name, b in r["backends"].items()
        if name != "torch"
    ]


if __name__ == "__main__":
    sys.exit(main())
