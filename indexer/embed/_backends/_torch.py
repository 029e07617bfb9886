"""``torch``: sentence-transformers on PyTorch; fp32 on CPU, fp16 on CUDA with memory-sized batches."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from base import EmbeddingError
from indexer.embed._backend import DEFAULT_BATCH_SIZE, EmbeddingBackend, SentenceModel, register
from indexer.embed._device import select_device
from indexer.embed._models import ModelSpec

#: fraction of the free GPU memory one batch's activations may take
GPU_MEMORY_FRACTION = 0.5
MAX_GPU_BATCH = 4096


def quietly(load: Callable[[], Any]) -> Any:
    """Run ``load`` with transformers' own tqdm bars off (they garble our rich progress bar)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        return load()
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return load()
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def gpu_batch_size(
    free_bytes: int,
    *,
    hidden: int,
    intermediate: int,
    heads: int,
    seq_len: int,
    bytes_per_value: int = 2,
    fraction: float = GPU_MEMORY_FRACTION,
) -> int:
    """The largest power of two (32..4096) whose activations fit in ``fraction`` of ``free_bytes``.

    Per text, inference holds about one layer's activations at a time: the
    hidden states and the feed-forward intermediate (``seq_len × (4·hidden +
    intermediate)``) and, when attention is not fused, the score matrices
    (``heads × seq_len²``); a factor 2 covers allocator slack and temporaries.
    """
    per_text = 2 * bytes_per_value * (seq_len * (4 * hidden + intermediate) + heads * seq_len * seq_len)
    fits = int(free_bytes * fraction) // max(per_text, 1)
    size = DEFAULT_BATCH_SIZE
    while size * 2 <= min(fits, MAX_GPU_BATCH):
        size *= 2
    return size


class TorchModel:
    """A ``SentenceTransformer`` as a :class:`SentenceModel`."""

    def __init__(self, model: Any, dims: int) -> None:
        self.model = model
        self._dims = dims

    @property
    def tokenizer(self) -> Any:
        return getattr(self.model, "tokenizer", None)

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    @property
    def dims(self) -> int:
        return self._dims

    def encode_batch(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        vectors = self.model.encode(
            list(texts),
            prompt=prompt,  # "" too: None would apply the folder's default_prompt_name, unrecorded
            batch_size=len(texts),
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def model_shape(model: TorchModel) -> dict[str, int]:
    """The transformer's sizes that set its activation memory (from its Hugging Face config)."""
    first = model.model[0]
    hf = getattr(first, "auto_model", None) or getattr(first, "model", None)
    config = getattr(hf, "config", None)
    if config is None:
        raise EmbeddingError("cannot size GPU batches: the model's first module has no Hugging Face config")
    hidden = int(config.hidden_size)
    return {
        "hidden": hidden,
        "intermediate": int(getattr(config, "intermediate_size", None) or 4 * hidden),
        "heads": int(config.num_attention_heads),
        "seq_len": model.max_seq_length,
    }


@register
class TorchBackend(EmbeddingBackend):
    name = "torch"
    summary = "sentence-transformers on PyTorch (fp32; fp16 on CUDA)"
    devices = ("cpu", "cuda", "mps")

    def select_device(self, requested: str | None) -> str:
        return select_device(requested)

    def precision(self, device: str) -> str:
        return "fp16" if device.startswith("cuda") else "fp32"

    def precisions(self, device: str) -> tuple[str, ...]:
        return ("fp16", "fp32") if device.startswith("cuda") else ("fp32",)

    def batch_size(self, model: SentenceModel, device: str) -> int:
        if not device.startswith("cuda") or not isinstance(model, TorchModel):
            return DEFAULT_BATCH_SIZE
        import torch

        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return gpu_batch_size(free, **model_shape(model))

    def load(
        self, spec: ModelSpec, device: str, models_dir: Path | None, *, threads: int | None = None
    ) -> SentenceModel:
        precision = self.check_precision(spec.precision, device)
        if threads is not None and device == "cpu":
            import torch

            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)  # process-wide: torch has no per-model setting
        if spec.is_local:
            # The weights are on disk; never try the hub (it is unreachable here anyway).
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            model = quietly(lambda: _sentence_transformer(spec, device))
            if precision == "fp16":
                model.half()
        except Exception as exc:
            raise EmbeddingError(
                f"could not load embedding model {spec.model_id!r} from {spec.path_or_name!r} on {device}"
            ) from exc
        get_dims = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dims = get_dims()
        if dims is None:
            raise EmbeddingError(f"model {spec.model_id!r} does not report its embedding dimensions")
        return TorchModel(model, int(dims))


def _sentence_transformer(spec: ModelSpec, device: str) -> Any:
    """``spec``'s model; a folder without modules.json gets ``spec.pooling`` instead of the mean default."""
    from sentence_transformers import SentenceTransformer

    kwargs: dict[str, Any] = {"device": device, "trust_remote_code": spec.trust_remote_code}
    if spec.is_local:
        kwargs["local_files_only"] = True
    else:
        kwargs["revision"] = spec.revision
    model = SentenceTransformer(spec.path_or_name, **kwargs)
    if spec.pooling is None:
        return model
    try:
        from sentence_transformers.sentence_transformer.modules import Pooling
    except ImportError:  # sentence-transformers before 6
        from sentence_transformers.models import Pooling  # type: ignore[no-redef]
    get_dims = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dims = get_dims()  # of the mean pooling: the transformer's hidden size
    if dims is None:
        raise EmbeddingError(f"model {spec.model_id!r} does not report its hidden size")
    return SentenceTransformer(
        modules=[model[0], Pooling(int(dims), pooling_mode=spec.pooling)], device=device
    )
