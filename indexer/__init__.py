"""indexer: everything that puts data into the engine (Elasticsearch or OpenSearch).

The public surface is exactly what ``harness`` uses (tests/test_layering.py checks both ways):
connection settings and clients, the backend seam (``indexer.backends``), the node the harness runs
(``indexer.node``: a local process or a Docker container, and the engine flavours), datasets,
embeddings, index building and administration, the exception tree, and the helpers every layer
shares (one retry policy, one progress display, atomic writes, one SQLite store under the on-disk
caches, one ``slug``). OpenAI-compatible endpoints (where, the key held as a ``Secret``, retries)
live here too, so the embedding layer and the harness's chat client (``harness/llm``) share them.
Everything else is private, behind leading underscores, or reached through a subpackage's own
``__all__`` (``indexer.backends``, ``indexer.data``, ``indexer.embed``, ``indexer.node``). This
package never imports ``harness``.
"""

from indexer._admin import delete_indices, list_indices, resolve_deletion
from indexer._atomic import read_json, write_json_atomic, write_jsonl_atomic, write_text_atomic
from indexer._build import IndexOptions, IndexSummary, build_index
from indexer._connection import ConnectionSettings
from indexer._env import from_env
from indexer._exceptions import (
    BulkIndexError,
    CapabilityMissing,
    ConfigError,
    ConnectionFailed,
    DataError,
    EmbeddingError,
    EndpointError,
    EngineUnavailable,
    HarnessError,
    IndexingError,
    RequestFailed,
)
from indexer._layout import (
    ANALYSIS_CHAINS,
    BM25_FIELDS,
    BM25_PARAMS,
    KNN_ENGINES,
    VECTOR_INDEX_TYPES,
    VectorOptions,
    choose_analysis,
    slug,
)
from indexer._openai_api import DEFAULT_KEY_ENV, Endpoint, RetryCounter, explain, is_fatal, with_retries
from indexer._paths import default_cache_dir, default_state_dir
from indexer._progress import progress
from indexer._retry import Retry
from indexer._stack import stack_login
from indexer._store import SqliteStore
from indexer._user_mapping import UserMapping, load_user_mapping
from indexer.backends import (
    HYBRID_QUERY,
    KNN,
    LINEAR_RETRIEVER,
    RRF_RETRIEVER,
    SEARCH_TEMPLATE,
    Backend,
    Capabilities,
    FusionParams,
    KnnSpec,
    QueryDialect,
    SearchResult,
    VectorSpec,
    connect,
)
from indexer.data import (
    EXPANSION_FILE,
    JUDGMENT_FORMATS,
    Dataset,
    Judgments,
    describe,
    expansion_root,
    judged_dataset,
    known_datasets,
    load_dataset,
    read_judgments,
    resolve_specs,
)
from indexer.embed import (
    DEFAULT_EMBED_BACKEND,
    TRUST_FLAG,
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    backend_names,
    build_encoder,
    cache_key,
    document_text,
    endpoint_for,
    folder_revision,
    remote_code_models,
    resolve_model,
)
from indexer.node import (
    DEFAULT_DOCKER_IMAGE,
    DockerEngineConfig,
    DockerNode,
    EngineConfig,
    ManagedNode,
    choose_node,
    open_node,
)

__version__ = "0.1.0"

__all__ = [
    "ANALYSIS_CHAINS",
    "BM25_FIELDS",
    "BM25_PARAMS",
    "DEFAULT_DOCKER_IMAGE",
    "DEFAULT_EMBED_BACKEND",
    "DEFAULT_KEY_ENV",
    "EXPANSION_FILE",
    "HYBRID_QUERY",
    "JUDGMENT_FORMATS",
    "KNN",
    "KNN_ENGINES",
    "LINEAR_RETRIEVER",
    "RRF_RETRIEVER",
    "SEARCH_TEMPLATE",
    "TRUST_FLAG",
    "VECTOR_INDEX_TYPES",
    "Backend",
    "BulkIndexError",
    "CachedEmbedder",
    "Capabilities",
    "CapabilityMissing",
    "ConfigError",
    "ConnectionFailed",
    "ConnectionSettings",
    "DataError",
    "Dataset",
    "DockerEngineConfig",
    "DockerNode",
    "EmbeddingCache",
    "EmbeddingError",
    "Encoder",
    "Endpoint",
    "EndpointError",
    "EngineConfig",
    "EngineUnavailable",
    "FusionParams",
    "HarnessError",
    "IndexOptions",
    "IndexSummary",
    "IndexingError",
    "Judgments",
    "KnnSpec",
    "ManagedNode",
    "ModelSpec",
    "QueryDialect",
    "RequestFailed",
    "Retry",
    "RetryCounter",
    "SearchResult",
    "SqliteStore",
    "UserMapping",
    "VectorOptions",
    "VectorSpec",
    "__version__",
    "backend_names",
    "build_encoder",
    "build_index",
    "cache_key",
    "choose_analysis",
    "choose_node",
    "connect",
    "default_cache_dir",
    "default_state_dir",
    "delete_indices",
    "describe",
    "document_text",
    "endpoint_for",
    "expansion_root",
    "explain",
    "folder_revision",
    "from_env",
    "is_fatal",
    "judged_dataset",
    "known_datasets",
    "list_indices",
    "load_dataset",
    "load_user_mapping",
    "open_node",
    "progress",
    "read_json",
    "read_judgments",
    "remote_code_models",
    "resolve_deletion",
    "resolve_model",
    "resolve_specs",
    "slug",
    "stack_login",
    "with_retries",
    "write_json_atomic",
    "write_jsonl_atomic",
    "write_text_atomic",
]
