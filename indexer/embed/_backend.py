"""The embedding backend seam: what runs the model (torch, ONNX Runtime, OpenVINO) and at what precision.

A backend turns a :class:`ModelSpec` into a loaded :class:`SentenceModel` on a
device, and says which precisions its vectors can have there (torch on CUDA runs
fp16; ONNX int8 is int8 everywhere; OpenVINO runs fp32, or bf16 where the CPU has
native bf16 units). Backends live in a registry, one module each under
:mod:`indexer.embed._backends`. ``--embed-backend`` names one, optionally with a
precision (``openvino/fp32``), or ``auto`` (the default): the fastest numerics
this machine runs within the measured tolerance of torch fp32, decided once per
machine (:mod:`indexer.embed._auto`).

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

from base import ConfigError
from indexer.embed._models import PRECISIONS, ModelSpec

DEFAULT_BATCH_SIZE = 32
AUTO = "auto"
#: what `harness index` and `harness run` use without --embed-backend: decided where it runs
#: (:mod:`indexer.embed._auto`; docs/embedding-numerics.md says which numerics and why)
DEFAULT_EMBED_BACKEND = AUTO


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
        """The precision vectors have on ``device`` by default (``fp32``, ``fp16``, ``bf16`` or ``int8``)."""

    def precisions(self, device: str) -> tuple[str, ...]:
        """Every precision this backend can compute at on ``device``, its default first."""
        return (self.precision(device),)

    def check_precision(self, precision: str, device: str) -> str:
        """``precision`` when this backend runs it on ``device``; :class:`ConfigError` otherwise."""
        offered = self.precisions(device)
        if precision not in offered:
            raise ConfigError(
                f"--embed-backend {self.name}/{precision}: {self.name} computes at {', '.join(offered)} on "
                f"{device}, not at {precision}"
            )
        return precision

    def batch_size(self, model: SentenceModel, device: str) -> int:
        """Texts per model call when the user gave none."""
        return DEFAULT_BATCH_SIZE

    @abstractmethod
    def load(
        self, spec: ModelSpec, device: str, models_dir: Path | None, *, threads: int | None = None
    ) -> SentenceModel:
        """Load (exporting first if needed, into ``models_dir``) and return the model, computing at
        ``spec.precision`` with ``threads`` intra-op threads (None: the runtime's own choice)."""


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


def split_backend(value: str) -> tuple[str, str | None]:
    """``NAME[/PRECISION]`` as ``--embed-backend`` takes it: (name, precision or None), lower-cased."""
    name, _, precision = value.strip().lower().partition("/")
    return name, precision or None


def check_backend_name(value: str) -> str:
    """``value`` when it is ``auto`` or a registered backend, with a known precision if one is given;
    :class:`ConfigError` saying what was expected otherwise (whether the device runs that precision
    is checked when the encoder picks its device)."""
    name, precision = split_backend(value)
    if name == AUTO and precision is None:
        return value
    if name == AUTO:
        raise ConfigError(f"expected auto alone (auto chooses its own precision), found {value!r}")
    get_backend(name)
    if precision is not None and precision not in PRECISIONS:
        raise ConfigError(
            f"expected a precision among {', '.join(PRECISIONS)}, found {precision!r} in {value!r}"
        )
    return value


def resolve_backend(name: str) -> EmbeddingBackend:
    """The backend ``name`` names (``NAME[/PRECISION]``), checked for its packages (``auto`` is decided by
    :func:`indexer.embed._auto.choose_numerics`, which needs the model)."""
    base, _ = split_backend(name)
    if base == AUTO:
        raise ConfigError("--embed-backend auto is decided per model: resolve it with choose_numerics")
    backend = get_backend(base)
    backend.check()
    return backend


def _load_registry() -> None:
    # importing the package registers every backend module (once)
    importlib.import_module("indexer.embed._backends")
