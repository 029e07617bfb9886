"""The Backend seam: one protocol, one module per engine, chosen from what the cluster says it is.

    backend = connect(settings)             # asks the URL, builds the matching backend, waits for health
    backend.create_index(name, settings=..., mappings={"properties": {"v": backend.vector_mapping(spec)}})
    backend.msearch(index, [backend.knn_search(KnnSpec("v", vector, k=10, num_candidates=100))])

Only the modules of this package import a search client.
"""

from __future__ import annotations

import importlib

from base import ConfigError, UnsupportedEngine
from indexer._connection import ConnectionSettings
from indexer.backends._base import Backend, QueryDialect
from indexer.backends._detect import detect_product
from indexer.backends._types import (
    FEATURES,
    FUSION_KINDS,
    HYBRID_QUERY,
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
#: the oldest version of each product the harness drives, and why
MIN_VERSIONS: dict[str, tuple[tuple[int, ...], str]] = {
    "elasticsearch": ((9, 0), "elasticsearch-py 9 speaks the REST compatibility of Elasticsearch 9.x only"),
    "opensearch": ((2, 0), "OpenSearch 1.x has no Lucene k-NN engine and is end of life"),
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

    The engine is always asked (:func:`detect_product`), never assumed. ``wait_for_status``
    None reads the health without waiting for a colour. Errors:
    :class:`~base.ConnectionFailed` (unreachable, bad credentials, untrusted; its
    :class:`~base.EngineUnavailable` when nothing answers), :class:`~base.UnsupportedEngine`
    (neither engine, or too old). Close the backend when done (or use it as a context manager).
    """
    product = detect_product(settings)
    backend = backend_class(product)(settings)  # type: ignore[call-arg]
    try:
        backend.health(wait_for_status=wait_for_status, timeout_s=timeout_s)
        info = backend.info()
        floor, why = MIN_VERSIONS[product]
        if info.version_tuple < floor:
            raise UnsupportedEngine(
                f"{settings.url} runs {product} {info.version}: expected {'.'.join(map(str, floor))} or newer ({why})"
            )
    except BaseException:
        backend.close()
        raise
    return backend


__all__ = [
    "BACKENDS",
    "FEATURES",
    "FUSION_KINDS",
    "HYBRID_QUERY",
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
    "connect",
    "detect_product",
]
