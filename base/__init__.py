"""base: what every layer of r2med-harness shares, below both ``indexer`` (data into the engine, and the
engine itself) and ``harness`` (queries, runs, scores, reports).

The one exception tree (:class:`HarnessError` and its branches), the environment variables (``ENV_VARS``,
read with :func:`from_env`), the per-user folders, atomic writes, timed phases, the one progress display,
the one retry policy, the one SQLite store under the on-disk caches, ``slug``, :class:`Secret`, and the
code for OpenAI-compatible endpoints (where, the key held as a ``Secret``, retries) that embeddings,
judges, expansions and rerankers share. This package imports neither ``indexer`` nor ``harness``
(tests/test_layering.py).
"""

from base._atomic import read_json, write_json_atomic, write_jsonl_atomic, write_text_atomic
from base._env import ENV_HELP, ENV_VARS, from_env, variable
from base._exceptions import (
    BulkIndexError,
    CacheError,
    CapabilityMissing,
    ConfigError,
    ConnectionFailed,
    DataError,
    DistributionNotFoundError,
    EmbeddingError,
    EndpointError,
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
from base._openai_api import (
    DEFAULT_KEY_ENV,
    Endpoint,
    EndpointFailure,
    RetryCounter,
    create_embeddings,
    explain,
    is_fatal,
    with_retries,
)
from base._paths import default_cache_dir, default_state_dir, is_root
from base._phases import phase, record_startup, timed
from base._progress import Stage, Tracker, progress, quiet
from base._retry import Retry
from base._secret import Secret
from base._store import SqliteStore
from base._text import slug

__all__ = [
    "DEFAULT_KEY_ENV",
    "ENV_HELP",
    "ENV_VARS",
    "BulkIndexError",
    "CacheError",
    "CapabilityMissing",
    "ConfigError",
    "ConnectionFailed",
    "DataError",
    "DistributionNotFoundError",
    "EmbeddingError",
    "Endpoint",
    "EndpointError",
    "EndpointFailure",
    "EngineError",
    "EngineUnavailable",
    "HarnessError",
    "IndexingError",
    "JavaNotFoundError",
    "MappingConflictError",
    "NodeDiedError",
    "NotFound",
    "PortInUseError",
    "RequestFailed",
    "Retry",
    "RetryCounter",
    "Secret",
    "SqliteStore",
    "Stage",
    "Tracker",
    "UnsupportedEngine",
    "VerificationError",
    "create_embeddings",
    "default_cache_dir",
    "default_state_dir",
    "explain",
    "from_env",
    "is_fatal",
    "is_root",
    "phase",
    "progress",
    "quiet",
    "read_json",
    "record_startup",
    "slug",
    "timed",
    "variable",
    "with_retries",
    "write_json_atomic",
    "write_jsonl_atomic",
    "write_text_atomic",
]
