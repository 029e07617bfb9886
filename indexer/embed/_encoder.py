"""A lazily loaded sentence-embedding encoder with length-sorted batches, on a pluggable backend."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from base import EmbeddingError, phase
from indexer.embed._auto import AutoChoice, Embed, choose_numerics, reason_line
from indexer.embed._backend import (
    AUTO,
    DEFAULT_BATCH_SIZE,
    EmbeddingBackend,
    SentenceModel,
    get_backend,
    resolve_backend,
    split_backend,
)
from indexer.embed._device import select_device
from indexer.embed._models import ModelSpec
from indexer.embed._threads import embed_threads

__all__ = ["DEFAULT_BATCH_SIZE", "Encoder", "EncoderStats", "batch_order", "l2_normalize"]


@dataclass
class EncoderStats:
    """Counters of real model work (cache hits never show up here)."""

    model_calls: int = 0  # forward passes, one per batch
    texts_encoded: int = 0
    seconds: float = 0.0  # time spent encoding, model loading excluded
    load_seconds: float = 0.0


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
    """Encodes texts with one :class:`ModelSpec` on one backend, loading the model on first use.

    ``backend`` is a registered backend name (``torch``, ``onnx``, ``onnx-int8``,
    ``openvino``), optionally with a precision (``openvino/fp32``), or ``auto``
    (decided on first use, :mod:`indexer.embed._auto`; :attr:`choice` says what
    and why); a named backend whose packages are missing fails here, before any
    work, naming the pip extra. :attr:`spec` is the given spec with the backend
    and the precision it runs at on the chosen device filled in, so the cache
    key, the index ``_meta`` and the run manifest all carry them. ``threads``:
    intra-op threads (None: :func:`~indexer.embed.embed_threads`).

    Each batch is one model call. With ``sort_by_length`` (the default) texts
    are grouped by token length so a batch pads little; results always come
    back in input order. Without ``batch_size`` the backend chooses (32 on a
    CPU; sized to free memory on a GPU).
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        sort_by_length: bool = True,
        backend: str | None = "torch",
        models_dir: Path | None = None,
        threads: int | None = None,
        progress: bool = False,
    ) -> None:
        if batch_size is not None and batch_size <= 0:
            raise EmbeddingError(f"batch size must be positive, found {batch_size}")
        if threads is not None and threads <= 0:
            raise EmbeddingError(f"threads must be positive, found {threads}")
        name, self._precision = split_backend(backend or AUTO)
        self._backend: EmbeddingBackend | None = None if name == AUTO else resolve_backend(name)
        self.choice: AutoChoice | None = None  # what auto decided (None: a named backend)
        self.threads = threads
        self.progress = progress  # show auto's check while it runs (once per machine)
        self.base_spec = spec
        self.requested_device = device
        self.requested_batch_size = batch_size
        self.sort_by_length = sort_by_length
        self.models_dir = models_dir
        self.stats = EncoderStats()
        self._model: SentenceModel | None = None
        self._device: str | None = None
        self._spec: ModelSpec | None = None
        self._auto_batch_size: int | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def decided(self) -> bool:
        """Whether the numerics are fixed: a named backend, or ``auto`` once it chose (or adopted)."""
        return self._backend is not None

    def adopt(self, backend: str, precision: str, reason: str) -> None:
        """``auto`` before it decides: take these numerics for ``reason``, with no check (vectors shipped with
        the package cover what it would compute; :func:`~indexer.embed.adopt_bundled`)."""
        if self.decided:
            raise EmbeddingError(f"the numerics are already {self.spec.numerics}: expected auto, undecided")
        device = _auto_device(self.requested_device)
        self.choice = AutoChoice(backend, precision, reason, machine=device)
        self._backend, self._precision, self._device = get_backend(backend), precision, device

    @property
    def backend(self) -> EmbeddingBackend:
        """The backend that computes the vectors (``auto``: decided now, from this machine's record or the
        check, which loads models but never this encoder's)."""
        if self._backend is None:
            device = _auto_device(self.requested_device)
            self.choice = choose_numerics(
                self.base_spec, device, self._checker(device), progress=self.progress
            )
            self._backend, self._precision = get_backend(self.choice.backend), self.choice.precision
            self._device = device
        return self._backend

    def _checker(self, device: str) -> Callable[[str, str], Embed]:
        """For auto's check: an embedding function for each numerics, of encoders like this one."""

        def make(backend: str, precision: str) -> Embed:
            encoder = Encoder(
                self.base_spec,
                device=device,
                backend=f"{backend}/{precision}",
                models_dir=self.models_dir,
                threads=self.threads,
            )
            return lambda texts: encoder.encode(texts, prompt=self.base_spec.document_prompt)

        return make

    @property
    def device(self) -> str:
        """The device the model runs on (loads nothing; resolves the choice)."""
        if self._device is None:
            self._device = self.backend.select_device(self.requested_device)
        return self._device

    @property
    def spec(self) -> ModelSpec:
        """The model spec with this encoder's backend and precision (loads nothing)."""
        if self._spec is None:
            backend, device = self.backend, self.device
            precision = (
                backend.check_precision(self._precision, device)
                if self._precision
                else backend.precision(device)
            )
            why = reason_line(self.choice) if self.choice is not None else ""
            self._spec = self.base_spec.with_numerics(backend.name, precision, why)
        return self._spec

    @property
    def batch_size(self) -> int:
        """Texts per model call: as given, else the backend's choice once the model is loaded."""
        return self.requested_batch_size or self._auto_batch_size or DEFAULT_BATCH_SIZE

    @property
    def dims(self) -> int:
        """Vector dimensions, as reported by the loaded model."""
        return self.load().dims

    @property
    def max_seq_length(self) -> int:
        return int(self.load().max_seq_length)

    def load(self) -> SentenceModel:
        """Load the model now (idempotent; exports it first for ONNX and OpenVINO) and return it."""
        if self._model is not None:
            return self._model
        spec, device = self.spec, self.device
        started = time.perf_counter()
        with phase("model load"):
            model = self.backend.load(spec, device, self.models_dir, threads=self.threads or embed_threads())
        if spec.dims is not None and int(model.dims) != spec.dims:
            raise EmbeddingError(
                f"model {spec.model_id!r} produces {model.dims}-dimensional vectors, expected {spec.dims}"
            )
        self._auto_batch_size = self.backend.batch_size(model, device)
        self.stats.load_seconds += time.perf_counter() - started
        self._model = model
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
        model = self.load()
        size = batch_size or self.batch_size
        if size <= 0:
            raise EmbeddingError(f"batch size must be positive, found {size}")
        dims = model.dims
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
                vectors = model.encode_batch(batch, prompt)
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


def _auto_device(requested: str | None) -> str:
    """The device auto runs on: as asked, else cpu where no GPU can be present (without importing torch,
    which a machine deciding for OpenVINO or ONNX Runtime need not load), else torch's choice."""
    if requested not in (None, "auto"):
        return select_device(requested)
    if not Path("/proc/driver/nvidia").exists() and sys.platform != "darwin":
        return "cpu"
    return select_device(None)
