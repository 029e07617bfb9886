"""A cross-encoder reranker (sentence-transformers ``CrossEncoder``), its scores cached like embeddings."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from base import EmbeddingError, default_cache_dir
from harness._errors import RunError
from harness.rerank._base import check_texts
from indexer import EmbeddingCache, cache_key, folder_revision

#: pairs scored per model call, sorted by length so that a batch pads little
BATCH_SIZE = 32


def is_cross_encoder(folder: Path) -> bool:
    """A Hugging Face folder whose model classifies sequences (how cross-encoders are saved)."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return any(str(a).endswith("ForSequenceClassification") for a in config.get("architectures") or [])


class CrossEncoderReranker:
    """Scores (query, document) pairs with a cross-encoder from a local folder or the hub."""

    kind = "cross"

    def __init__(self, path_or_name: str, cache: EmbeddingCache | None = None) -> None:
        folder = Path(path_or_name).expanduser()
        self.path_or_name = str(folder.resolve()) if folder.is_dir() else path_or_name
        self.revision = folder_revision(folder) if folder.is_dir() else "main"
        self.cache = cache if cache is not None else EmbeddingCache(default_cache_dir() / "rerank")
        self.model_calls = 0
        self._model: Any = None

    @property
    def identity(self) -> dict[str, str]:
        return {"kind": self.kind, "model": self.path_or_name, "revision": self.revision}

    def _load(self) -> Any:
        if self._model is None:
            try:
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(
                    self.path_or_name, local_files_only=Path(self.path_or_name).is_dir()
                )
            except Exception as exc:
                raise EmbeddingError(f"could not load cross-encoder {self.path_or_name!r}") from exc
        return self._model

    def _key(self, query: str, text: str) -> str:
        return cache_key(
            self.path_or_name, self.revision, "cross-encoder", f"{query}\x1f{text}", normalize=False
        )

    def score(
        self, queries: Mapping[str, str], candidates: Mapping[str, Sequence[str]], texts: Mapping[str, str]
    ) -> dict[str, dict[str, float]]:
        check_texts(candidates, texts)
        pairs = [(q, d) for q, docs in candidates.items() for d in docs]
        keys = [self._key(queries[q], texts[d]) for q, d in pairs]
        found = {k: float(v[0]) for k, v in self.cache.get_many(keys).items()}
        todo = sorted(
            {
                k: (queries[q], texts[d]) for k, (q, d) in zip(keys, pairs, strict=True) if k not in found
            }.items(),
            key=lambda item: len(item[1][0]) + len(item[1][1]),
        )
        for start in range(0, len(todo), BATCH_SIZE):
            batch = todo[start : start + BATCH_SIZE]
            scores = self._load().predict(
                [pair for _, pair in batch], batch_size=BATCH_SIZE, show_progress_bar=False
            )
            self.model_calls += 1
            # kept as float32, as the cache keeps them: a rerun from the cache ranks exactly alike
            flat = np.asarray(scores, dtype=np.float32).reshape(-1)
            fresh = {k: float(s) for (k, _), s in zip(batch, flat, strict=True)}
            self.cache.put_many((k, np.array([s], dtype=np.float32)) for k, s in fresh.items())
            found.update(fresh)
        out: dict[str, dict[str, float]] = {}
        for (q, d), k in zip(pairs, keys, strict=True):
            if k not in found:
                raise RunError(f"rerank: no score for query {q} document {d}")
            out.setdefault(q, {})[d] = found[k]
        return out
