"""Cached, streaming embedding of documents and queries."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from base import EmbeddingError, timed
from base import progress as show_progress
from indexer.embed._cache import EmbeddingCache, spec_key
from indexer.embed._models import ModelSpec
from indexer.embed._protocol import TextEncoder

DEFAULT_WINDOW = 2048


@dataclass
class EmbedStats:
    """What one :class:`CachedEmbedder` has done so far (all calls together)."""

    texts: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    model_calls: int = 0
    texts_encoded: int = 0
    seconds: float = 0.0  # time spent embedding (lookups, model, writes), consumer time excluded

    @property
    def texts_per_s(self) -> float:
        return self.texts / self.seconds if self.seconds > 0 else 0.0


def document_text(title: str | None, text: str | None, sep: str = " ") -> str:
    """The text embedded for a document: title and body joined (BEIR's convention), blanks dropped."""
    return sep.join(part.strip() for part in (title or "", text or "") if part and part.strip())


class CachedEmbedder:
    """An encoder (local :class:`Encoder` or :class:`EndpointEncoder`) behind an :class:`EmbeddingCache`:
    only texts never seen are encoded.

    ``cache=None`` disables caching (every text is encoded).
    """

    def __init__(
        self,
        encoder: TextEncoder,
        cache: EmbeddingCache | None = None,
        *,
        window: int = DEFAULT_WINDOW,
    ) -> None:
        if window <= 0:
            raise EmbeddingError(f"window must be positive, found {window}")
        self.encoder = encoder
        self.cache = cache
        self.window = window
        self.stats = EmbedStats()

    @property
    def spec(self) -> ModelSpec:
        return self.encoder.spec

    @timed("embed")
    def _embed(
        self,
        texts: Sequence[str],
        prompt: str,
        batch_size: int | None,
        advance: Callable[[int], None] | None,
    ) -> np.ndarray:
        started = time.perf_counter()
        calls_before = self.encoder.stats.model_calls
        encoded_before = self.encoder.stats.texts_encoded
        keys = [spec_key(self.spec, prompt, t) for t in texts]
        found = self.cache.get_many(keys) if self.cache is not None else {}
        hits = sum(1 for k in keys if k in found)
        if advance is not None and hits:
            advance(hits)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            vectors = self.encoder.encode(
                list(missing.values()), prompt=prompt, batch_size=batch_size, on_batch=advance
            )
            fresh = dict(zip(missing, vectors, strict=True))
            if self.cache is not None:
                self.cache.put_many(fresh.items())
            found.update(fresh)
        if advance is not None and len(texts) - hits - len(missing) > 0:
            advance(len(texts) - hits - len(missing))  # repeats of a text encoded in this window
        dims = {found[k].shape[0] for k in found}
        if len(dims) > 1:
            raise EmbeddingError(
                f"vectors of different sizes {sorted(dims)} for model {self.spec.model_id!r}: expected one size; "
                f"the cache at {self.cache.path if self.cache else '?'} disagrees with the model"
            )
        if texts:
            out = np.stack([found[k] for k in keys]).astype(np.float32, copy=False)
        else:
            out = np.zeros((0, self.spec.dims or self.encoder.dims), dtype=np.float32)
        stats = self.stats
        stats.texts += len(texts)
        stats.cache_hits += hits
        stats.cache_misses += len(texts) - hits
        stats.model_calls += self.encoder.stats.model_calls - calls_before
        stats.texts_encoded += self.encoder.stats.texts_encoded - encoded_before
        stats.seconds += time.perf_counter() - started
        return out

    def embed_documents(
        self,
        docs: Iterable[tuple[str, str]],
        *,
        batch_size: int | None = None,
        progress: bool = False,
        total: int | None = None,
        description: str | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> Iterator[tuple[list[str], np.ndarray]]:
        """Stream ``(ids, vectors)`` for ``(id, text)`` pairs, one window at a time, in input order.

        Memory is bounded by the window size. A window's new vectors are
        committed to the cache before it is yielded, so a crash loses at most
        the window in progress. ``progress`` shows a progress display;
        ``on_progress`` is told of every text done (from the cache or the model).
        """
        iterator = iter(docs)
        what = description or f"embedding {self.spec.model_id.rsplit('/', 1)[-1]}"
        with show_progress(what, total, unit="docs", enabled=progress) as bar:

            def advance(n: int) -> None:
                bar.advance(n)
                if on_progress is not None:
                    on_progress(n)

            while True:
                chunk = list(islice(iterator, self.window))
                if not chunk:
                    return
                ids = [doc_id for doc_id, _ in chunk]
                texts = [text for _, text in chunk]
                vectors = self._embed(texts, self.spec.document_prompt, batch_size, advance)
                yield ids, vectors

    def embed_queries(
        self, texts: Sequence[str], *, batch_size: int | None = None, prompt: str | None = None
    ) -> np.ndarray:
        """Query vectors (the query prompt applied, or ``prompt`` when given: ``""`` for none), shape
        ``(len(texts), dims)``, in input order; cached."""
        texts = list(texts)
        used = self.spec.query_prompt if prompt is None else prompt
        parts = [
            self._embed(texts[start : start + self.window], used, batch_size, None)
            for start in range(0, len(texts), self.window)
        ]
        return np.concatenate(parts) if parts else self._embed([], used, batch_size, None)
