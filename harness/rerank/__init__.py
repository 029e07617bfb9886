"""Rerank stage: re-score an arm's top-k with a cross-encoder or a second embedding model.

``--rerank [cross:|bi:]MODEL[@DEPTH]`` adds an arm ``<arm>>rerank`` for each reranked arm. Without a
prefix the kind follows from MODEL: a folder holding a sequence-classification model is a
cross-encoder, anything ``--model`` accepts is a bi-encoder. ``RERANKERS`` maps a kind to its
builder, so a new kind is one module and one registration.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.rerank._base import DEFAULT_DEPTH, Reranker, RerankSpec
from harness.rerank._bi import BiEncoderReranker
from harness.rerank._cross import CrossEncoderReranker, is_cross_encoder
from indexer import CachedEmbedder, EmbeddingCache, Encoder, resolve_model

#: builds a cached embedder for a model name, with the run's endpoint and embedding backend
EmbedderFactory = Callable[[str], CachedEmbedder]

RERANKERS: dict[str, Callable[[str, EmbedderFactory], Reranker]] = {
    "bi": lambda model, embedder: BiEncoderReranker(embedder(model)),
    "cross": lambda model, _: CrossEncoderReranker(model),
}


def _default_embedder(model: str) -> CachedEmbedder:
    return CachedEmbedder(Encoder(resolve_model(model)), EmbeddingCache())


def make_reranker(spec: RerankSpec, embedder: EmbedderFactory = _default_embedder) -> Reranker:
    """The reranker a parsed ``--rerank`` names (the kind given, or decided by what the model is)."""
    kind = spec.kind or ("cross" if is_cross_encoder(Path(spec.model).expanduser()) else "bi")
    return RERANKERS[kind](spec.model, embedder)


__all__ = [
    "DEFAULT_DEPTH",
    "RERANKERS",
    "BiEncoderReranker",
    "CrossEncoderReranker",
    "EmbedderFactory",
    "RerankSpec",
    "Reranker",
    "is_cross_encoder",
    "make_reranker",
]
