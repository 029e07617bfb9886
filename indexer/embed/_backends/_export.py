"""ONNX exports of a model folder, made once, offline, and cached beside the embedding cache.

    <cache>/models/<model slug>-<sha256(model id, revision, recipe)[:16]>/
        model.onnx         the transformer as exported from PyTorch (standard ONNX ops; OpenVINO runs it)
        model_fused.onnx   the same graph with ONNX Runtime's BERT fusions (attention, layer norm, GELU)
        model_int8.onnx    the fused graph with int8 weights (dynamic quantization, per channel)
        export.json        what was made, from which model and revision, with which package versions

Each file is written to a temporary name and renamed into place, under a file
lock, so concurrent processes export once and never read half a file. The
folder is keyed by model id and revision (a local folder's revision is the hash
of its files), plus :data:`RECIPE`: change the export steps, bump the recipe.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from base import EmbeddingError, default_cache_dir
from indexer.embed._backends._runtime import model_folder
from indexer.embed._backends._torch import quietly
from indexer.embed._models import ModelSpec, field_name_for

RECIPE = "r2med-onnx-v1"
OPSET = 17
ARTIFACTS = {"plain": "model.onnx", "fused": "model_fused.onnx", "int8": "model_int8.onnx"}
HIDDEN_OUTPUT = "last_hidden_state"
#: Hugging Face model types whose graphs ONNX Runtime's transformer optimizer fuses as BERT
_FUSABLE = {"bert": "bert", "roberta": "bert", "xlm-roberta": "bert", "mpnet": "bert", "distilbert": "bert"}


def default_models_dir() -> Path:
    return default_cache_dir() / "models"


def export_folder(spec: ModelSpec, root: Path | None = None) -> Path:
    digest = hashlib.sha256("\0".join((spec.model_id, spec.revision, RECIPE)).encode()).hexdigest()[:16]
    slug = field_name_for(spec.model_id).removeprefix("vec_")
    return (root or default_models_dir()) / f"{slug}-{digest}"


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _hf_config(folder: Path) -> Any:
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(str(folder))


def _export_plain(folder: Path, source: Path | None, dest: Path) -> None:
    """Trace the transformer (eager attention, so the graph has plain ops) into ONNX with dynamic axes."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = quietly(lambda: AutoModel.from_pretrained(str(folder), attn_implementation="eager")).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    sample = tokenizer(["a short text", "a somewhat longer text, padded"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: Any) -> Any:
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, HIDDEN_OUTPUT]}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes about Python booleans; the graph is checked below
        torch.onnx.export(
            Hidden(),
            tuple(sample[n] for n in names),
            str(dest),
            input_names=names,
            output_names=[HIDDEN_OUTPUT],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _fuse(folder: Path, source: Path | None, dest: Path) -> None:
    """ONNX Runtime's transformer optimizer (BERT fusions); other architectures keep the plain graph."""
    assert source is not None
    config = _hf_config(folder)
    model_type = _FUSABLE.get(str(getattr(config, "model_type", "")))
    if model_type is None:
        dest.write_bytes(source.read_bytes())
        return
    from onnxruntime.transformers.optimizer import optimize_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimized = optimize_model(
            str(source),
            model_type=model_type,
            num_heads=int(config.num_attention_heads),
            hidden_size=int(config.hidden_size),
        )
    optimized.save_model_to_file(str(dest))


def _quantize(folder: Path, source: Path | None, dest: Path) -> None:
    """Dynamic int8 quantization of the weights (activations are quantized per batch at run time)."""
    assert source is not None
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)  # the quantizer logs advice to the root logger
        try:
            quantize_dynamic(
                str(source),
                str(dest),
                weight_type=QuantType.QInt8,
                per_channel=True,
                extra_options={
                    "DefaultTensorType": onnx.TensorProto.FLOAT
                },  # fused ops have no inferred types
            )
        finally:
            logging.disable(logging.NOTSET)


# artifact -> (the artifact it is made from, the step that makes it)
_STEPS: dict[str, tuple[str | None, Callable[[Path, Path | None, Path], None]]] = {
    "plain": (None, _export_plain),
    "fused": ("plain", _fuse),
    "int8": ("fused", _quantize),
}


def _versions() -> dict[str, str]:
    found = {}
    for package in ("torch", "transformers", "onnx", "onnxruntime", "openvino"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[package] = metadata.version(package)
    return found


def _record(folder: Path, spec: ModelSpec, kind: str, seconds: float) -> None:
    path = folder / "export.json"
    record: dict[str, Any] = {"model_id": spec.model_id, "revision": spec.revision, "recipe": RECIPE}
    if path.is_file():
        with contextlib.suppress(OSError, ValueError):
            record = json.loads(path.read_text(encoding="utf-8"))
    record.setdefault("artifacts", {})[kind] = {
        "file": ARTIFACTS[kind],
        "bytes": (folder / ARTIFACTS[kind]).stat().st_size,
        "seconds": round(seconds, 2),
        "created": datetime.now(UTC).isoformat(),
        "versions": _versions(),
    }
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record, indent=2), encoding="utf-8")
    os.replace(temporary, path)


def _make(spec: ModelSpec, folder: Path, source_folder: Path, kind: str) -> Path:
    target = folder / ARTIFACTS[kind]
    if target.is_file():
        return target
    parent, step = _STEPS[kind]
    source = _make(spec, folder, source_folder, parent) if parent else None
    temporary = folder / f".{kind}.{os.getpid()}.tmp.onnx"
    started = time.perf_counter()
    try:
        step(source_folder, source, temporary)
        os.replace(temporary, target)
    except EmbeddingError:
        raise
    except Exception as exc:
        raise EmbeddingError(
            f"could not make the {kind} ONNX graph of {spec.model_id!r} in {folder} (step {step.__name__})"
        ) from exc
    finally:
        temporary.unlink(missing_ok=True)
    _record(folder, spec, kind, time.perf_counter() - started)
    return target


def ensure_onnx(spec: ModelSpec, kind: str, root: Path | None = None) -> Path:
    """The path of ``spec``'s ``kind`` graph (``plain``, ``fused`` or ``int8``), exporting it first if needed."""
    if kind not in ARTIFACTS:
        raise EmbeddingError(f"unknown ONNX artifact {kind!r}: expected one of {', '.join(ARTIFACTS)}")
    folder = export_folder(spec, root)
    target = folder / ARTIFACTS[kind]
    if target.is_file():
        return target
    source_folder = model_folder(spec)
    try:
        with _locked(folder):
            return _make(spec, folder, source_folder, kind)
    except OSError as exc:
        raise EmbeddingError(f"cannot write ONNX exports to {folder}") from exc
