"""Embeddings: model specs and prompts, a length-sorting encoder, an on-disk cache, and the
streaming cached embedder the index builder uses.

    spec = resolve_model("minilm")                     # the bundled all-MiniLM-L6-v2
    embedder = CachedEmbedder(Encoder(spec), EmbeddingCache())
    for ids, vectors in embedder.embed_documents(pairs, progress=True):
        ...                                            # vectors: float32 (len(ids), dims), unit length

    spec = resolve_model("openai:text-embedding-3-small")  # through an OpenAI-compatible endpoint
    embedder = CachedEmbedder(build_encoder(spec, endpoint=Endpoint.resolve(url)), cache)
"""

from indexer.embed._cache import (
    EmbeddingCache,
    cache_key,
    default_cache_dir,
    default_embedding_cache_dir,
    spec_key,
)
from indexer.embed._device import available_devices, choose_device, select_device
from indexer.embed._embedder import (
    DEFAULT_WINDOW,
    CachedEmbedder,
    EmbedStats,
    document_text,
)
from indexer.embed._encoder import DEFAULT_BATCH_SIZE, Encoder, EncoderStats, batch_order, l2_normalize
from indexer.embed._endpoint import (
    EndpointEncoder,
    EndpointStats,
    build_encoder,
    endpoint_for,
    endpoint_spec,
    is_endpoint_model,
)
from indexer.embed._models import (
    BGE_QUERY_PROMPT,
    DEFAULT_MODEL,
    E5_DOCUMENT_PROMPT,
    E5_QUERY_PROMPT,
    INSTRUCT_QUERY_PROMPT,
    ModelSpec,
    bundled_model_path,
    field_name_for,
    folder_revision,
    known_models,
    resolve_model,
)

__all__ = [
    "BGE_QUERY_PROMPT",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MODEL",
    "DEFAULT_WINDOW",
    "E5_DOCUMENT_PROMPT",
    "E5_QUERY_PROMPT",
    "INSTRUCT_QUERY_PROMPT",
    "CachedEmbedder",
    "EmbedStats",
    "EmbeddingCache",
    "Encoder",
    "EncoderStats",
    "EndpointEncoder",
    "EndpointStats",
    "ModelSpec",
    "available_devices",
    "batch_order",
    "build_encoder",
    "bundled_model_path",
    "cache_key",
    "choose_device",
    "default_cache_dir",
    "default_embedding_cache_dir",
    "document_text",
    "endpoint_for",
    "endpoint_spec",
    "field_name_for",
    "folder_revision",
    "is_endpoint_model",
    "known_models",
    "l2_normalize",
    "resolve_model",
    "select_device",
    "spec_key",
]
