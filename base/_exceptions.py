"""The one exception tree of r2med-harness.

Every error the product raises on purpose derives from :class:`HarnessError`.
Its ``str()`` walks the ``__cause__`` chain, so a message printed at the CLI
edge says what failed and why, down to the root cause, on one screen.

    HarnessError
    ├── ConfigError            bad flags, settings or files given by the user
    ├── DataError              a dataset that fails validation (carries Problems)
    ├── EngineError            the managed local node (Elasticsearch or OpenSearch)
    │   ├── JavaNotFoundError
    │   ├── DistributionNotFoundError
    │   ├── PortInUseError
    │   └── NodeDiedError
    ├── ConnectionFailed       cannot reach / authenticate to / trust a cluster
    │   └── EngineUnavailable  the connection broke or timed out (retryable)
    ├── RequestFailed          the cluster answered a request with an error (status, type, reason)
    │   └── NotFound           404: no such index, alias or template
    ├── UnsupportedEngine      not Elasticsearch/OpenSearch, or a version the harness cannot drive
    ├── CapabilityMissing      the cluster lacks what a request needs (e.g. the k-NN plugin)
    ├── IndexingError          building or publishing an index
    │   ├── BulkIndexError     per-document failures (structured, never dropped)
    │   ├── VerificationError  an index that must not be published
    │   └── MappingConflictError  e.g. vector dims differ from the existing field
    ├── EmbeddingError         the embedding model could not load or encode
    ├── EndpointError          an OpenAI-compatible API refused or kept failing
    │   └── GenerationError    some queries got no generation (defined in harness/; each query named)
    ├── CacheError             an on-disk cache could not be opened, read or written
    └── RunError               querying, fusion, evaluation, reports (defined in harness/)

The CLI maps every HarnessError to a non-zero exit and prints ``str(err)``;
anything else is a bug and is shown with its traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class HarnessError(Exception):
    """Root of every error r2med-harness raises on purpose."""

    exit_code: int = 1

    def __str__(self) -> str:
        parts = [super().__str__()]
        cause = self.__cause__
        seen: set[int] = set()
        while cause is not None and id(cause) not in seen:
            seen.add(id(cause))
            text = Exception.__str__(cause) if isinstance(cause, HarnessError) else str(cause)
            parts.append(f"caused by {type(cause).__name__}: {text}")
            cause = cause.__cause__
        return "\n  ".join(p for p in parts if p)


class ConfigError(HarnessError):
    """A flag, setting or file given by the user is invalid."""

    exit_code = 2


class DataError(HarnessError):
    """A dataset failed validation; ``problems`` lists every error found."""

    def __init__(self, message: str, problems: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


class EngineError(HarnessError):
    """The managed local node could not be started, stopped or read."""


class JavaNotFoundError(EngineError):
    """No suitable Java runtime was found for the managed node."""


class DistributionNotFoundError(EngineError):
    """No distribution (archive or folder) or plugin archive was found."""


class PortInUseError(EngineError):
    """The HTTP port of the managed node is already taken by another process."""


class NodeDiedError(EngineError):
    """The managed node exited; the message carries the tail of its log."""


class ConnectionFailed(HarnessError):
    """A cluster could not be reached, authenticated to, or trusted."""


class EngineUnavailable(ConnectionFailed):
    """The connection broke, was refused or timed out: the same request may succeed later."""

    retryable = True


class RequestFailed(HarnessError):
    """The cluster answered with an error; ``retryable`` for 429 and 5xx (overload, node restarts)."""

    RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        #: seconds the server asked us to wait (its ``Retry-After`` header), when it sent one
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.status in self.RETRYABLE_STATUS


class NotFound(RequestFailed):
    """HTTP 404: the index, alias or template does not exist."""


class UnsupportedEngine(HarnessError):
    """The server is not a search engine the harness drives, or a version it cannot drive."""

    exit_code = 2


class CapabilityMissing(HarnessError):
    """The cluster lacks what a request needs (a plugin, an analyzer, a query type)."""


class IndexingError(HarnessError):
    """Building, verifying or publishing an index failed."""


class BulkIndexError(IndexingError):
    """Some documents were rejected; ``errors`` holds one dict per failed document."""

    def __init__(self, message: str, errors: Sequence[dict[str, Any]]) -> None:
        super().__init__(message)
        self.errors = list(errors)


class VerificationError(IndexingError):
    """A built index failed verification and was not published."""


class MappingConflictError(IndexingError):
    """The requested layout conflicts with an existing index (e.g. vector dims)."""


class EmbeddingError(HarnessError):
    """The embedding model could not be loaded or failed to encode."""


class EndpointError(HarnessError):
    """An OpenAI-compatible endpoint (chat or embeddings) refused the request or kept failing."""


class CacheError(HarnessError):
    """An on-disk cache (embeddings, generations) could not be opened, read or written."""
