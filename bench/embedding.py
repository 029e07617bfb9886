"""Embedding benchmarks for issue 4: (b) the embedding cache, cold against warm, and
(d) length-sorted against unsorted batches, both on real SciFact abstracts.

    python bench/embedding.py [--docs 1000] [--cache-docs N] [--batch-size 32] [--device cpu]

Importable: ``bench_cache(...)`` and ``bench_batching(...)`` return dicts of the
figures (``bench/index.py`` prints them with the others). Model loading is
done before any clock starts, so no figure includes it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from indexer import progress as show_progress
from indexer.embed import (
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=1000, help="SciFact documents for both figures")
    parser.add_argument("--cache-docs", type=int, default=None, help="documents for (b) (default: --docs)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: automatic)")
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--rounds", type=int, default=4, help="alternating slices for (d)")
    parser.add_argument("--only", choices=("cache", "batching"), default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    common = {"model": args.model, "batch_size": args.batch_size, "device": args.device}
    progress = not args.no_progress
    results = []
    if args.only in (None, "cache"):
        results.append(bench_cache(args.cache_docs or args.docs, progress=progress, **common))
        print_cache(results[-1])
    if args.only in (None, "batching"):
        results.append(bench_batching(args.docs, progress=progress, rounds=args.rounds, **common))
        print_batching(results[-1])
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if all(r.get("passed", True) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
