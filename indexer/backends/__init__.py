"""The Backend seam: one protocol, one module per engine, chosen from what the cluster says it is.

    backend = connect(settings)             # asks the URL, builds the matching backend, waits for health
    backend.create_index(name, settings=..., mappings={"properties": {"v": backend.vector_mapping(spec)}})
    backend.msearch(index, [backend.knn_search(KnnSpec("v", vector, k=10, num_candidates=100))])

Only the modules of this package import a search client.
"""

from __future__ import annotations

import importlib

from base import ConfigError
from indexer._connection import ConnectionSettings
from indexer.backends._base import Backend, QueryDialect
from indexer.backends._detect import MIN_VERSIONS, check_floor, detect, detect_product
from indexer.backends._types import (
    APPROXIMATE_KNN,
    FEATURES,
    FUSION_KINDS,
    HYBRID_QUERY,
    HYBRID_TECHNIQUES,
    KNN,
    LINEAR_RETRIEVER,
    RANK_EVAL,
    RRF_RETRIEVER,
    SEARCH_TEMPLATE,
    SIMILARITIES,
    BulkItem,
    BulkResult,
    Capabilities,
    ClusterHealth,
    EngineInfo,
    FusionParams,
    Hit,
    IndexMapping,
    IndexStats,
    KnnSpec,
    RankEvalResult,
    RatedRequest,
    SearchResult,
    VectorSpec,
)

#: product -> "module:class"; imported on first use, so a run against one engine never loads the other client
BACKENDS: dict[str, str] = {
    "elasticsearch": "indexer.backends._elasticsearch:ElasticsearchBackend",
    "opensearch": "indexer.backends._opensearch:OpenSearchBackend",
}


def backend_class(product: str) -> type[Backend]:
    try:
        module_name, _, cls_name = BACKENDS[product].partition(":")
    except KeyError:
        raise ConfigError(
            f"unknown backend {product!r}: expected one of {', '.join(sorted(BACKENDS))}"
        ) from None
    cls: type[Backend] = getattr(importlib.import_module(module_name), cls_name)
    return cls


def connect(
    settings: ConnectionSettings, *, wait_for_status: str | None = "yellow", timeout_s: float = 30.0
) -> Backend:
    """The backend for the cluster at ``settings.url``, proven to work (reachable, trusted, healthy).

    The engine is asked first, never assumed: one plain request says product, version and flavour
    (:func:`detect`), and a cluster below the floor is refused before any other call (:func:`check_floor`);
    the backend then speaks that version's dialect. ``wait_for_status`` None reads the health without waiting
    for a colour; a serverless project has no health to wait for. Errors:
    :class:`~base.ConnectionFailed` (unreachable, bad credentials, untrusted; its
    :class:`~base.EngineUnavailable` when nothing answers), :class:`~base.UnsupportedEngine`
    (neither engine, or too old). Close the backend when done (or use it as a context manager).
    """
    server = detect(settings)
    check_floor(server, settings)
    backend = backend_class(server.product)(settings, server)  # type: ignore[call-arg]
    try:
        backend.health(wait_for_status=wait_for_status, timeout_s=timeout_s)
    except BaseException:
        backend.close()
        raise
    return backend


__all__ = [
    "APPROXIMATE_KNN",
    "BACKENDS",
    "FEATURES",
    "FUSION_KINDS",
    "HYBRID_QUERY",
    "HYBRID_TECHNIQUES",
    "KNN",
    "LINEAR_RETRIEVER",
    "MIN_VERSIONS",
    "RANK_EVAL",
    "RRF_RETRIEVER",
    "SEARCH_TEMPLATE",
    "SIMILARITIES",
    "Backend",
    "BulkItem",
    "BulkResult",
    "Capabilities",
    "ClusterHealth",
    "EngineInfo",
    "FusionParams",
    "Hit",
    "IndexMapping",
    "IndexStats",
    "KnnSpec",
    "QueryDialect",
    "RankEvalResult",
    "RatedRequest",
    "SearchResult",
    "VectorSpec",
    "backend_class",
    "check_floor",
    "connect",
    "detect",
    "detect_product",
]
