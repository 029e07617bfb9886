"""The GPU stage of ``bench/scale.py``: embed the whole synthetic R2MED-shaped corpus (about 357K
documents) on one CUDA device, fp16, with batches sized to free memory, and say how it compares with
the goal of under 15 minutes end to end on one H200.

    python bench/scale_gpu.py --tokenizer DIR [--fraction 1.0] [--max-seconds 420]
    python bench/scale_gpu.py --tokenizer DIR --device cpu --tiny --fraction 0.0005   # a smoke run on a CPU

The model is a bge-base-class BERT (12 layers, hidden 768, 12 heads, 3,072 intermediate, 512
positions, CLS pooling, normalised) built from its configuration with *random weights*: weights
cannot travel to the device machine (at most 64 MiB goes with the working tree) and the hub is out
of reach. Speed does not depend on weight values; quality is not measured here at all. The
tokenizer is the uncased BERT WordPiece vocabulary (30,522 tokens) that bge-base uses too, read from
``DIR`` (a copy of the bundled all-MiniLM-L6-v2's tokenizer files, which carry the same vocabulary).

It runs the harness's own encoder (``indexer.embed.Encoder``, torch backend: fp16 on CUDA, the
batch size chosen by ``gpu_batch_size`` from free memory, length-sorted batches). On a machine
without the harness's other dependencies (Elasticsearch client, rich...) it loads only the
embedding modules, which need just torch, transformers, sentence-transformers and numpy.

Prints one JSON line at the end with every figure.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO)]

import _synth  # noqa: E402  (after the path set-up)

GOAL_S = 15 * 60
BGE_BASE = {
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
}
TINY = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 128,
    "max_position_embeddings": 512,
}


def _embedding_modules() -> tuple[Any, Any]:
    """``(Encoder, ModelSpec)`` from the harness; without its package-level dependencies if need be."""
    try:
        from indexer.embed import Encoder, ModelSpec

        return Encoder, ModelSpec
    except ImportError as exc:
        print(f"note: {exc}; loading indexer.embed's encoder modules alone", file=sys.stderr)
    for name in [m for m in list(sys.modules) if m == "indexer" or m.startswith("indexer.")]:
        del sys.modules[name]
    for package in ("indexer", "indexer.embed"):
        stub = types.ModuleType(package)
        stub.__path__ = [str(REPO / package.replace(".", "/"))]
        sys.modules[package] = stub
    encoder = importlib.import_module("indexer.embed._encoder")
    models = importlib.import_module("indexer.embed._models")
    return encoder.Encoder, models.ModelSpec


def build_model(folder: Path, tokenizer_dir: Path, config: dict[str, int], seed: int = 0) -> None:
    """A sentence-transformers folder: random-weight BERT, CLS pooling, normalisation."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=30522, **config)).save_pretrained(str(folder))
    AutoTokenizer.from_pretrained(str(tokenizer_dir)).save_pretrained(str(folder))
    transformer = models.Transformer(str(folder), max_seq_length=512)
    get_dims = (
        getattr(transformer, "get_embedding_dimension", None) or transformer.get_word_embedding_dimension
    )
    pooling = models.Pooling(get_dims(), pooling_mode="cls")
    SentenceTransformer(modules=[transformer, pooling, models.Normalize()]).save(str(folder))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--tokenizer", type=Path, required=True, help="folder with tokenizer.json and vocab.txt"
    )
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model (smoke runs on a CPU)")
    parser.add_argument("--max-seconds", type=float, default=420.0, help="stop embedding after this long")
    parser.add_argument(
        "--window", type=int, default=16384, help="texts per encode call (progress granularity)"
    )
    args = parser.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(
            "no CUDA device here: nothing measured (use --device cpu --tiny for a smoke run)", file=sys.stderr
        )
        return 2
    facts: dict[str, Any] = {
        "device": args.device,
        "model": "tiny" if args.tiny else "bge-base (random weights)",
    }
    if args.device.startswith("cuda"):
        facts["gpu"] = torch.cuda.get_device_name(0)
        facts["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    started = time.perf_counter()
    texts = list(_synth.texts(args.fraction))
    facts.update(documents=len(texts), corpus_s=round(time.perf_counter() - started, 1))
    Encoder, ModelSpec = _embedding_modules()
    folder = Path(tempfile.mkdtemp(prefix="bge-base-random-"))
    try:
        build_model(folder, args.tokenizer, TINY if args.tiny else BGE_BASE)
        spec = ModelSpec(
            model_id="synthetic/bge-base-random", path_or_name=str(folder), revision="random-seed-0"
        )
        encoder = Encoder(spec, device=args.device, backend="torch")
        started = time.perf_counter()
        encoder.load()
        encoder.encode(texts[:64])  # warm-up: kernels, allocator
        facts.update(load_s=round(time.perf_counter() - started, 1), numerics=encoder.spec.numerics)
        facts["batch_size"] = encoder.batch_size
        done, started = 0, time.perf_counter()
        while done < len(texts) and time.perf_counter() - started < args.max_seconds:
            encoder.encode_documents(texts[done : done + args.window])
            done += len(texts[done : done + args.window])
            rate = done / (time.perf_counter() - started)
            print(f"  {done:,}/{len(texts):,} docs, {rate:,.0f} docs/s", file=sys.stderr, flush=True)
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rate = done / seconds
    full = sum(n for _, _, n in _synth.R2MED_SHAPE)
    facts.update(
        embedded=done,
        seconds=round(seconds, 1),
        docs_per_s=round(rate, 1),
        projected_full_corpus_s=round(full / rate, 1),
        goal_s=GOAL_S,
        peak_gpu_memory_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2)
        if args.device.startswith("cuda")
        else None,
        model_seconds=round(encoder.stats.seconds, 1),
    )
    print(
        f"embedded {done:,} of {len(texts):,} synthetic documents in {seconds:.1f}s = {rate:,.0f} docs/s "
        f"({facts['numerics']}, batch {facts['batch_size']}); all {full:,} would take {full / rate / 60:.1f} min "
        f"of embedding against a {GOAL_S // 60}-minute end-to-end goal"
    )
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    sys.exit(main())
