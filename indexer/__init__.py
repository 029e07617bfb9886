"""indexer: everything that puts data into Elasticsearch.

Public surface (everything else is private, behind leading underscores):
connection settings and clients, the managed local node, the capability
probe, datasets, embeddings and index building. ``harness`` builds on this
package; this package never imports ``harness``.
"""

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

__version__ = "0.1.0"

__all__ = [
    "BulkIndexError",
    "ConfigError",
    "ConnectionFailed",
    "DataError",
    "DistributionNotFoundError",
    "EmbeddingError",
    "EngineError",
    "HarnessError",
    "IndexingError",
    "JavaNotFoundError",
    "MappingConflictError",
    "NodeDiedError",
    "PortInUseError",
    "RunError",
    "VerificationError",
    "__version__",
]
