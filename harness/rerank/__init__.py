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
from indexer import resolve_model

RERANKERS: dict[str, Callable[[str], Reranker]] = {
    "bi": lambda model: BiEncoderReranker(resolve_model(model)),
    "cross": CrossEncoderReranker,
}


def make_reranker(spec: RerankSpec) -> Reranker:
    """The reranker a parsed ``--rerank`` names (the kind given, or decided by what the model is)."""
    kind = spec.kind or ("cross" if is_cross_encoder(Path(spec.model).expanduser()) else "bi")
    return RERANKERS[kind](spec.model)


__all__ = [
    "DEFAULT_DEPTH",
    "RERANKERS",
    "BiEncoderReranker",
    "CrossEncoderReranker",
    "RerankSpec",
    "Reranker",
    "make_reranker",
]
