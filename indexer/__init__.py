"""indexer: everything that puts data into Elasticsearch.

Public surface (everything else is private, behind leading underscores):
connection settings and clients, the managed local node, the capability
probe, datasets, embeddings and index building. ``harness`` builds on this
package; this package never imports ``harness``.
"""

from indexer._connection import ConnectionSettings, Secret, connect
from indexer._engine import (
    EngineConfig,
    ManagedNode,
    NodeStatus,
    find_java,
)
from indexer._exceptions import (
    BulkIndexError,
    ConfigError,
    ConnectionFailed,
    DataError,
    DistributionNotFoundError,
    EmbeddingError,
    EngineError,
    HarnessError,
    IndexingError,
    JavaNotFoundError,
    MappingConflictError,
    NodeDiedError,
    PortInUseError,
    RunError,
    VerificationError,
)
from indexer._paths import default_cache_dir, default_state_dir
from indexer._probe import Capabilities, probe
from indexer._version import ELASTICSEARCH_VERSION

__version__ = "0.1.0"

__all__ = [
    "ELASTICSEARCH_VERSION",
    "BulkIndexError",
    "Capabilities",
    "ConfigError",
    "ConnectionFailed",
    "ConnectionSettings",
    "DataError",
    "DistributionNotFoundError",
    "EmbeddingError",
    "EngineConfig",
    "EngineError",
    "HarnessError",
    "IndexingError",
    "JavaNotFoundError",
    "ManagedNode",
    "MappingConflictError",
    "NodeDiedError",
    "NodeStatus",
    "PortInUseError",
    "RunError",
    "Secret",
    "VerificationError",
    "__version__",
    "connect",
    "default_cache_dir",
    "default_state_dir",
    "find_java",
    "probe",
]
