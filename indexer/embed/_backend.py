"""The embedding backend seam: what runs the model (torch, ONNX Runtime, OpenVINO) and at what precision.

A backend turns a :class:`ModelSpec` into a loaded :class:`SentenceModel` on a
device, and says which precision its vectors have there (torch on CUDA runs
fp16; ONNX int8 is int8 everywhere). Backends live in a registry, one module
each under :mod:`indexer.embed._backends`; ``auto`` picks by device from
:data:`AUTO_ORDER` (see the README's embedding section for the measurements
behind that order).

A backend whose optional packages are missing fails at once with a
:class:`ConfigError` naming the pip extra to install.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from indexer._exceptions import ConfigError
from indexer.embed._device import select_device
from indexer.embed._models import ModelSpec

DEFAULT_BATCH_SIZE = 32
AUTO = "auto"
#: what `harness index` and `harness run` use without --embed-backend (see the README for why)
DEFAULT_EMBED_BACKEND = "torch"
#: device kind -> backends ``auto`` tries, in order; the first whose packages are installed wins
#: (cpu order measured by bench/embedding.py, figures e and f: openvino fastest and closest to torch fp32)
AUTO_ORDER: dict[str, tuple[str, ...]] = {
    "cuda": ("torch",),
    "mps": ("torch",),
    "cpu": ("openvino", "onnx-int8", "torch"),
}


class SentenceModel(Protocol):
    """A loaded model as the :class:`~indexer.embed.Encoder` drives it: one call per batch."""

    @property
    def tokenizer(self) -> Any: ...

    @property
    def max_seq_length(self) -> int: ...

    @property
    def dims(self) -> int: ...

    def encode_batch(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        """Raw (unnormalised) sentence vectors, shape ``(len(texts), dims)``."""
        ...


class EmbeddingBackend(ABC):
    """One way of running a sentence-embedding model. Subclasses register with :func:`register`."""

    name: ClassVar[str]
    summary: ClassVar[str]
    modules: ClassVar[tuple[str, ...]] = ()  # importable modules the backend needs
    extra: ClassVar[str | None] = None  # the r2med-harness pip extra that installs them
    devices: ClassVar[tuple[str, ...]] = ("cpu",)  # device kinds it runs on

    def check(self) -> None:
        """Raise :class:`ConfigError` naming the pip extra when a needed package is missing."""
        for module in self.modules:
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise ConfigError(
                    f"--embed-backend {self.name} needs the Python package {module!r}, which is not installed "
                    f"here; install it with: pip install 'r2med-harness[{self.extra}]' (or choose "
                    "--embed-backend torch)"
                ) from exc

    def available(self) -> bool:
        try:
            self.check()
        except ConfigError:
            return False
        return True

    def select_device(self, requested: str | None) -> str:
        """The device to run on; :class:`ConfigError` for one this backend cannot use."""
        if requested in (None, "auto"):
            return "cpu"
        kind = requested.split(":", 1)[0].strip().lower()
        if kind not in self.devices:
            raise ConfigError(
                f"--embed-backend {self.name} runs on {', '.join(self.devices)} only, not on {requested!r}; "
                "use --embed-backend torch for that device"
            )
        return requested

    @abstractmethod
    def precision(self, device: str) -> str:
        """The precision vectors have on ``device`` (``fp32``, ``fp16``, ``bf16`` or ``int8``)."""

    def batch_size(self, model: SentenceModel, device: str) -> int:
        """Texts per model call when the user gave none."""
        return DEFAULT_BATCH_SIZE

    @abstractmethod
    def load(self, spec: ModelSpec, device: str, models_dir: Path | None) -> SentenceModel:
        """Load (exporting first if needed, into ``models_dir``) and return the model."""


BACKENDS: dict[str, EmbeddingBackend] = {}


def register(cls: type[EmbeddingBackend]) -> type[EmbeddingBackend]:
    """Class decorator: add one instance of ``cls`` to :data:`BACKENDS` under ``cls.name``."""
    if cls.name in BACKENDS or cls.name == AUTO:
        raise ValueError(f"embedding backend {cls.name!r} is registered twice")
    BACKENDS[cls.name] = cls()
    return cls


def backend_names() -> list[str]:
    """``auto`` and every registered backend name."""
    _load_registry()
    return [AUTO, *BACKENDS]


def get_backend(name: str) -> EmbeddingBackend:
    """The registered backend called ``name``; :class:`ConfigError` listing the choices otherwise."""
    _load_registry()
    found = BACKENDS.get(name.strip().lower())
    if found is None:
        raise ConfigError(f"unknown embedding backend {name!r}: expected one of {', '.join(backend_names())}")
    return found


def resolve_backend(name: str | None, requested_device: str | None = None) -> EmbeddingBackend:
    """``name``'s backend, checked for its packages; ``auto``/``None`` picks by device (:data:`AUTO_ORDER`)."""
    if name is None or name.strip().lower() == AUTO:
        kind = select_device(requested_device).split(":", 1)[0]
        candidates = [get_backend(n) for n in AUTO_ORDER.get(kind, ("torch",))]
        return next((b for b in candidates if b.available()), get_backend("torch"))
    backend = get_backend(name)
    backend.check()
    return backend


def _load_registry() -> None:
    # importing the package registers every backend module (once)
    importlib.import_module("indexer.embed._backends")
