"""indexer: everything that puts data into the engine (Elasticsearch or OpenSearch).

Public surface (everything else is private, behind leading underscores): connection
settings and clients, the backend seam (``indexer.backends``), the managed local node
and its engine flavours (``indexer.engines``), the capability probe, datasets,
embeddings, index building and administration, and the helpers every layer shares
(one retry policy, one progress display, atomic writes, one ``slug``). ``harness``
builds on this package and imports only the names listed here; this package never
imports ``harness``.
"""

from indexer._admin import IndexInfo, delete_indices, list_indices, resolve_deletion
from indexer._atomic import atomic_write, read_json, write_json_atomic, write_jsonl_atomic, write_text_atomic
from indexer._build import IndexOptions, IndexSummary, build_index
from indexer._connection import ConnectionSettings, Secret, connect
from indexer._engine import EngineConfig, ManagedNode, NodeStatus, choose_node, find_java, recorded_engine
from indexer._env import ENV_VARS, from_env
from indexer._exceptions import (
    BulkIndexError,
    CapabilityMissing,
    ConfigError,
    ConnectionFailed,
    DataError,
    DistributionNotFoundError,
    EmbeddingError,
    EngineError,
    EngineUnavailable,
    HarnessError,
    IndexingError,
    JavaNotFoundError,
    MappingConflictError,
    NodeDiedError,
    NotFound,
    PortInUseError,
    RequestFailed,
    UnsupportedEngine,
    VerificationError,
)
from indexer._layout import ALIAS_PREFIX, BM25_FIELDS, VECTOR_INDEX_TYPES, VectorOptions, alias_for, slug
from indexer._paths import default_cache_dir, default_state_dir
from indexer._probe import Capabilities, probe
from indexer._progress import Tracker, progress
from indexer._retry import Retry
from indexer._version import ELASTICSEARCH_VERSION, OPENSEARCH_VERSION
from indexer.backends import Backend, KnnSpec, VectorSpec, open_backend
from indexer.data import (
    DATA_DIR_ENV,
    R2MED_NAMES,
    Dataset,
    Document,
    KnownDataset,
    Problem,
    Severity,
    describe,
    known_datasets,
    load_dataset,
    resolve_specs,
)
from indexer.embed import (
    DEFAULT_MODEL,
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    cache_key,
    document_text,
    folder_revision,
    known_models,
    resolve_model,
)
from indexer.engines import ENGINES, get_engine

__version__ = "0.1.0"

__all__ = [
    "ALIAS_PREFIX",
    "BM25_FIELDS",
    "DATA_DIR_ENV",
    "DEFAULT_MODEL",
    "ELASTICSEARCH_VERSION",
    "ENGINES",
    "ENV_VARS",
    "OPENSEARCH_VERSION",
    "R2MED_NAMES",
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
    "DistributionNotFoundError",
    "Document",
    "EmbeddingCache",
    "EmbeddingError",
    "Encoder",
    "EngineConfig",
    "EngineError",
    "EngineUnavailable",
    "HarnessError",
    "IndexInfo",
    "IndexOptions",
    "IndexSummary",
    "IndexingError",
    "JavaNotFoundError",
    "KnnSpec",
    "KnownDataset",
    "ManagedNode",
    "MappingConflictError",
    "ModelSpec",
    "NodeDiedError",
    "NodeStatus",
    "NotFound",
    "PortInUseError",
    "Problem",
    "RequestFailed",
    "Retry",
    "Secret",
    "Severity",
    "Tracker",
    "UnsupportedEngine",
    "VectorOptions",
    "VectorSpec",
    "VerificationError",
    "__version__",
    "alias_for",
    "atomic_write",
    "build_index",
    "cache_key",
    "choose_node",
    "connect",
    "default_cache_dir",
    "default_state_dir",
    "delete_indices",
    "describe",
    "document_text",
    "find_java",
    "folder_revision",
    "from_env",
    "get_engine",
    "known_datasets",
    "known_models",
    "list_indices",
    "load_dataset",
    "open_backend",
    "probe",
    "progress",
    "read_json",
    "recorded_engine",
    "resolve_deletion",
    "resolve_model",
    "resolve_specs",
    "slug",
    "write_json_atomic",
    "write_jsonl_atomic",
    "write_text_atomic",
]
