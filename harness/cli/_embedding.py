"""The embedding options shared by `harness index` and `harness run`, built once into an embedder."""

from __future__ import annotations

from typing import Annotated

import typer

from indexer import (
    DEFAULT_EMBED_BACKEND,
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    backend_names,
    resolve_model,
)

EmbedBackendOpt = Annotated[
    str,
    typer.Option(
        "--embed-backend",
        help=(
            f"What computes the vectors: {', '.join(backend_names())}. torch is the fp32 reference (fp16 on "
            "CUDA); onnx/onnx-int8 need the 'onnx' extra, openvino the 'openvino' extra; auto picks the "
            "fastest installed one for the device. Recorded in the cache key, the index _meta and the manifest."
        ),
    ),
]


def make_embedder(
    model: str, backend: str, *, query_prompt: str | None = None, cache: EmbeddingCache | None = None
) -> CachedEmbedder:
    """An embedder for ``model`` on ``backend``; a missing backend package fails here, before any work."""
    encoder = Encoder(resolve_model(model, query_prompt=query_prompt), backend=backend)
    return CachedEmbedder(encoder, cache if cache is not None else EmbeddingCache())


__all__ = ["DEFAULT_EMBED_BACKEND", "EmbedBackendOpt", "make_embedder"]
