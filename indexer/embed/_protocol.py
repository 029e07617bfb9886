"""What :class:`~indexer.embed.CachedEmbedder` needs from an encoder, whatever runs it (a local
sentence-transformers model, an OpenAI-compatible endpoint, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from indexer.embed._encoder import EncoderStats
from indexer.embed._models import ModelSpec


class TextEncoder(Protocol):
    """Encodes texts into float32 rows of ``dims`` columns, counting its real work in ``stats``."""

    @property
    def spec(self) -> ModelSpec: ...

    @property
    def stats(self) -> EncoderStats: ...

    @property
    def dims(self) -> int: ...

    def encode(
        self,
        texts: Sequence[str],
        *,
        prompt: str = "",
        batch_size: int | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> np.ndarray: ...
