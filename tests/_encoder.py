"""A stand-in text encoder for the tests of the embedding machinery (importable as ``tests._encoder``).

The cache, the windows, crash and resume, the order of results, threads and the progress display do not
depend on what the vectors mean, only on which text got which vector and how often the model was called.
:class:`StandInEncoder` implements :class:`indexer.embed.TextEncoder` (what :class:`~indexer.embed.CachedEmbedder`
takes) without a model: each text's vector is derived from a SHA-256 of the prompt and the text, so it is the
same in every process and on every CPU, distinct for distinct texts or prompts, unit length and float32. It
counts batches as the real encoder does (one model call per batch). The numerics of the real model (MiniLM
on torch, ONNX Runtime and OpenVINO) are tested apart, by the tests that take the ``minilm`` fixture
(marked ``model``; tests/conftest.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from indexer.embed import EncoderStats, ModelSpec, l2_normalize

DIMS = 384
SPEC = ModelSpec(
    model_id="tests/stand-in-encoder", path_or_name="tests/stand-in-encoder", revision="1", dims=DIMS
)


def stand_in_vector(text: str, prompt: str = "", dims: int = DIMS) -> np.ndarray:
    """The stand-in's vector of ``prompt + text`` (unit length, float32)."""
    seed = int.from_bytes(hashlib.sha256(f"{len(prompt)}:{prompt}{text}".encode()).digest()[:8], "little")
    return l2_normalize(np.random.default_rng(seed).standard_normal((1, dims)))[0]


class StandInEncoder:
    """A :class:`~indexer.embed.TextEncoder` without a model (see the module's notes).

    ``batch_size``: texts per model call, unless :meth:`encode` is given its own."""

    def __init__(self, spec: ModelSpec = SPEC, *, batch_size: int = 32) -> None:
        self._spec = spec
        self.batch_size = batch_size
        self._stats = EncoderStats()
        self.seen: list[list[str]] = []  # the texts of each model call, in order

    @property
    def spec(self) -> ModelSpec:
        return self._spec

    @property
    def stats(self) -> EncoderStats:
        return self._stats

    @property
    def dims(self) -> int:
        return self._spec.dims or DIMS

    @property
    def loaded(self) -> bool:
        """Whether a model call was made (the real encoder loads its model at the first)."""
        return self._stats.model_calls > 0

    def encode(
        self,
        texts: Sequence[str],
        *,
        prompt: str = "",
        batch_size: int | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        size = batch_size or self.batch_size
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(texts), size):
            batch = list(texts[start : start + size])
            out[start : start + len(batch)] = [stand_in_vector(t, prompt, self.dims) for t in batch]
            self._stats.model_calls += 1
            self._stats.texts_encoded += len(batch)
            self.seen.append(batch)
            if on_batch is not None:
                on_batch(len(batch))
        return out
