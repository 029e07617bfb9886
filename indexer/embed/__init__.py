"""Embeddings: model specs and prompts, a length-sorting encoder, an on-disk cache, and the
streaming cached embedder the index builder uses.

    spec = resolve_model("minilm")                     # the bundled all-MiniLM-L6-v2
    spec = resolve_model("BAAI/bge-small-en-v1.5@main")  # any hub id (offline: from the local HF cache)
    spec = resolve_model("/models/mine")               # any local folder (revision: a hash of its files)
    embedder = CachedEmbedder(Encoder(spec), EmbeddingCache())
    for ids, vectors in embedder.embed_documents(pairs, progress=True):
        ...                                            # vectors: float32 (len(ids), dims), unit length

    spec = resolve_model("openai:text-embedding-3-small")  # through an OpenAI-compatible endpoint
    embedder = CachedEmbedder(build_encoder(spec, endpoint=Endpoint.resolve(url)), cache)
    Encoder(spec, backend="onnx-int8")                 # another backend (see backend_names())
    Encoder(spec, backend="auto")                      # the fastest numerics this machine runs within
                                                       # tolerance of torch fp32 (encoder.choice: why)
"""

from indexer.embed._auto import (
    CPU_CANDIDATES,
    NDCG_TOLERANCE,
    SAMPLE_NDCG,
    AutoChoice,
    Candidate,
    Trial,
    choose_numerics,
    cpu_flags,
    reason_line,
)
from indexer.embed._backend import (
    BACKENDS,
    DEFAULT_EMBED_BACKEND,
    EmbeddingBackend,
    SentenceModel,
    backend_names,
    check_backend_name,
    get_backend,
    resolve_backend,
    split_backend,
)
from indexer.embed._bundled import (
    BUNDLE_COSINE_FLOOR,
    BundleCheck,
    BundledVectors,
    adopt_bundled,
    build_bundle,
    bundle_for,
    bundled_vectors,
    shipped,
    shipped_rows,
)
from indexer.embed._cache import (
    CACHE_FILE,
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
    PROBE_TEXT,
    EndpointEncoder,
    EndpointStats,
    build_encoder,
    endpoint_for,
    endpoint_spec,
    is_endpoint_model,
)
from indexer.embed._folder import FolderConfig, folder_revision, read_folder
from indexer.embed._hub import hub_cache_dir
from indexer.embed._known import (
    BGE_QUERY_PROMPT,
    BMR_DOCUMENT_PROMPT,
    BMR_QUERY_PROMPT,
    E5_DOCUMENT_PROMPT,
    E5_QUERY_PROMPT,
    INSTRUCT_QUERY_PROMPT,
    KNOWN_MODELS,
    KnownModel,
    find_known,
    remote_code_models,
)
from indexer.embed._models import (
    REFERENCE_BACKEND,
    REFERENCE_PRECISION,
    ModelSpec,
    bundled_model_path,
    field_name_for,
)
from indexer.embed._protocol import TextEncoder
from indexer.embed._resolve import DEFAULT_MODEL, TRUST_FLAG, known_models, resolve_model
from indexer.embed._threads import embed_threads, usable_cores

__all__ = [
    "BACKENDS",
    "BGE_QUERY_PROMPT",
    "BMR_DOCUMENT_PROMPT",
    "BMR_QUERY_PROMPT",
    "BUNDLE_COSINE_FLOOR",
    "CACHE_FILE",
    "CPU_CANDIDATES",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_EMBED_BACKEND",
    "DEFAULT_MODEL",
    "DEFAULT_WINDOW",
    "E5_DOCUMENT_PROMPT",
    "E5_QUERY_PROMPT",
    "INSTRUCT_QUERY_PROMPT",
    "KNOWN_MODELS",
    "NDCG_TOLERANCE",
    "PROBE_TEXT",
    "REFERENCE_BACKEND",
    "REFERENCE_PRECISION",
    "SAMPLE_NDCG",
    "TRUST_FLAG",
    "AutoChoice",
    "BundleCheck",
    "BundledVectors",
    "CachedEmbedder",
    "Candidate",
    "EmbedStats",
    "EmbeddingBackend",
    "EmbeddingCache",
    "Encoder",
    "EncoderStats",
    "EndpointEncoder",
    "EndpointStats",
    "FolderConfig",
    "KnownModel",
    "ModelSpec",
    "SentenceModel",
    "TextEncoder",
    "Trial",
    "adopt_bundled",
    "available_devices",
    "backend_names",
    "batch_order",
    "build_bundle",
    "build_encoder",
    "bundle_for",
    "bundled_model_path",
    "bundled_vectors",
    "cache_key",
    "check_backend_name",
    "choose_device",
    "choose_numerics",
    "cpu_flags",
    "default_cache_dir",
    "default_embedding_cache_dir",
    "document_text",
    "embed_threads",
    "endpoint_for",
    "endpoint_spec",
    "field_name_for",
    "find_known",
    "folder_revision",
    "get_backend",
    "hub_cache_dir",
    "is_endpoint_model",
    "known_models",
    "l2_normalize",
    "read_folder",
    "reason_line",
    "remote_code_models",
    "resolve_backend",
    "resolve_model",
    "select_device",
    "shipped",
    "shipped_rows",
    "spec_key",
    "split_backend",
    "usable_cores",
]
