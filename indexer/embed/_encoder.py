"""A lazily loaded sentence-transformers encoder with length-sorted batches."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from indexer._exceptions import EmbeddingError
from indexer.embed._device import select_device
from indexer.embed._models import ModelSpec

DEFAULT_BATCH_SIZE = 32


@dataclass
class EncoderStats:
    """Counters of real model work (cache hits never show up here)."""

    model_calls: int = 0  # forward passes, one per batch
    texts_encoded: int = 0
    seconds: float = 0.0  # time spent encoding, model loading excluded
    load_seconds: float = 0.0


def _quietly(load: Callable[[], Any]) -> Any:
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


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def batch_order(lengths: Sequence[int] | np.ndarray, *, sort_by_length: bool) -> np.ndarray:
    """Indices in encoding order: longest first when sorting (so a batch pads little), else input order."""
    if not sort_by_length:
        return np.arange(len(lengths))
    return np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")


class Encoder:
    """Encodes texts with one :class:`ModelSpec`, loading the model on first use.

    Each batch is one model call. With ``sort_by_length`` (the default) texts
    are grouped by token length so a batch pads little; results always come
    back in input order.
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        device: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        sort_by_length: bool = True,
    ) -> None:
        if batch_size <= 0:
            raise EmbeddingError(f"batch size must be positive, found {batch_size}")
        self.spec = spec
        self.requested_device = device
        self.batch_size = batch_size
        self.sort_by_length = sort_by_length
        self.stats = EncoderStats()
        self._model: Any = None
        self._device: str | None = None
        self._dims: int | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def device(self) -> str:
        """The device the model runs on (loads nothing; resolves the choice)."""
        if self._device is None:
            self._device = select_device(self.requested_device)
        return self._device

    @property
    def dims(self) -> int:
        """Vector dimensions, as reported by the loaded model."""
        if self._dims is None:
            self.load()
        assert self._dims is not None
        return self._dims

    @property
    def max_seq_length(self) -> int:
        return int(self.load().max_seq_length)

    def load(self) -> Any:
        """Load the model now (idempotent) and return the ``SentenceTransformer``."""
        if self._model is not None:
            return self._model
        spec = self.spec
        local = spec.is_local
        if local:
            # The weights are on disk; never try the hub (it is unreachable here anyway).
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        device = self.device
        started = time.perf_counter()
        try:
            from sentence_transformers import SentenceTransformer

            kwargs: dict[str, Any] = {"device": device}
            if local:
                kwargs["local_files_only"] = True
            else:
                kwargs["revision"] = spec.revision
            model = _quietly(lambda: SentenceTransformer(spec.path_or_name, **kwargs))
        except Exception as exc:
            raise EmbeddingError(
                f"could not load embedding model {spec.model_id!r} from {spec.path_or_name!r} on {device}"
            ) from exc
        get_dims = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dims = get_dims()
        if dims is None:
            raise EmbeddingError(f"model {spec.model_id!r} does not report its embedding dimensions")
        if spec.dims is not None and int(dims) != spec.dims:
            raise EmbeddingError(
                f"model {spec.model_id!r} produces {dims}-dimensional vectors, expected {spec.dims}"
            )
        self.stats.load_seconds += time.perf_counter() - started
        self._model, self._dims = model, int(dims)
        return model

    def text_lengths(self, texts: Sequence[str]) -> np.ndarray:
        """Length of each text as the model sees it: tokens, capped at ``max_seq_length``.

        Falls back to characters for a model without a tokenizer.
        """
        model = self.load()
        tokenizer = getattr(model, "tokenizer", None)
        if tokenizer is None or not texts:
            return np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        try:
            ids = tokenizer(list(texts), truncation=True, max_length=self.max_seq_length)["input_ids"]
        except Exception:  # a tokenizer that cannot do this: characters order almost as well
            return np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
        return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(texts))

    def encode(
        self,
        texts: Sequence[str],
        *,
        prompt: str = "",
        batch_size: int | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Vectors for ``texts`` (with ``prompt`` prepended), shape ``(len(texts), dims)``, float32.

        ``on_batch`` is called with the size of each batch once it is encoded.
        """
        size = batch_size or self.batch_size
        if size <= 0:
            raise EmbeddingError(f"batch size must be positive, found {size}")
        model = self.load()
        dims = self.dims
        out = np.empty((len(texts), dims), dtype=np.float32)
        order = batch_order(
            self.text_lengths(texts) if self.sort_by_length else [0] * len(texts),
            sort_by_length=self.sort_by_length,
        )
        started = time.perf_counter()
        for start in range(0, len(texts), size):
            index = order[start : start + size]
            batch = [texts[i] for i in index]
            try:
                vectors = model.encode(
                    batch,
                    prompt=prompt or None,
                    batch_size=len(batch),
                    convert_to_numpy=True,
                    normalize_embeddings=False,
                    show_progress_bar=False,
                )
            except Exception as exc:
                raise EmbeddingError(
                    f"model {self.spec.model_id!r} failed to encode a batch of {len(batch)} texts"
                ) from exc
            out[index] = vectors
            self.stats.model_calls += 1
            self.stats.texts_encoded += len(batch)
            if on_batch is not None:
                on_batch(len(batch))
        self.stats.seconds += time.perf_counter() - started
        return l2_normalize(out) if self.spec.normalize else out

    def encode_documents(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        return self.encode(texts, prompt=self.spec.document_prompt, batch_size=batch_size)

    def encode_queries(self, texts: Sequence[str], *, batch_size: int | None = None) -> np.ndarray:
        return self.encode(texts, prompt=self.spec.query_prompt, batch_size=batch_size)
