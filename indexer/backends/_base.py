"""The Backend protocol: everything the harness asks of a search cluster, in one small surface.

Two implementations (Elasticsearch through elasticsearch-py, OpenSearch through
opensearch-py) share the REST-level logic (:mod:`indexer.backends._rest`); each
owns its client, the one map from its client's exceptions to ours
(:mod:`base._exceptions`), its mapping and query dialects, and its probe.
No other module imports a search client.

Every method raises only :class:`~base.HarnessError` subclasses:
:class:`~base.ConnectionFailed` (:class:`~base.EngineUnavailable` when the
connection broke or timed out), :class:`~base.RequestFailed` (with ``status``
and ``retryable``; :class:`~base.NotFound` for 404),
:class:`~base.MappingConflictError`, :class:`~base.CapabilityMissing`.
``bulk`` and ``msearch`` never retry on their own: the caller paces retries.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

from indexer.backends._types import (
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


@runtime_checkable
class QueryDialect(Protocol):
    """How search bodies are written for one engine: what a retrieval strategy asks of a backend."""

    product: ClassVar[str]  # "elasticsearch" | "opensearch"

    @property
    def template_dialect(self) -> str:
        """The name of the built-in templates for this cluster (``vector-<dialect>.mustache``): the product,
        or a variant of it (``elasticsearch-exact``: kNN by script_score where there is no approximate kNN)."""
        ...

    def knn_search(self, knn: KnnSpec) -> dict[str, Any]:
        """The body of an approximate kNN search (no size/_source: the caller adds them)."""
        ...

    def weighted_sum(
        self,
        lexical: Mapping[str, Any],
        knn: KnnSpec,
        *,
        lexical_weight: float,
        vector_weight: float,
        bm25_k1: float | None = None,
    ) -> dict[str, Any]:
        """One search summing ``lexical_weight`` x BM25 and ``vector_weight`` x kNN score, in
        Elasticsearch's BM25 units on either engine when ``bm25_k1`` is given."""
        ...

    def fusion_search(
        self, kind: str, lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams
    ) -> dict[str, Any]:
        """An engine-side fusion (``FUSION_KINDS``); :class:`~base.CapabilityMissing` where the
        engine (or this cluster) has none of that kind."""
        ...

    def bm25_scale(self, k1: float) -> float:
        """The factor that turns this engine's BM25 scores into Elasticsearch's (``1 + k1`` on OpenSearch)."""
        ...


@runtime_checkable
class Backend(QueryDialect, Protocol):
    product: ClassVar[str]  # "elasticsearch" | "opensearch"

    @property
    def url(self) -> str: ...

    # -- the cluster
    def info(self) -> EngineInfo: ...
    def health(
        self, *, index: str | None = None, wait_for_status: str | None = None, timeout_s: float = 30.0
    ) -> ClusterHealth: ...
    def probe(self) -> Capabilities: ...
    def close(self) -> None: ...

    # -- index and template administration
    def index_exists(self, name: str) -> bool: ...
    def create_index(
        self, name: str, *, settings: Mapping[str, Any], mappings: Mapping[str, Any], wait_s: float = 30.0
    ) -> None: ...
    def delete_index(self, name: str, *, missing_ok: bool = False) -> bool: ...
    def get_mapping(self, name: str) -> IndexMapping: ...
    def put_mapping(
        self,
        name: str,
        *,
        properties: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None: ...
    def put_settings(self, name: str, settings: Mapping[str, Any]) -> None: ...
    def get_settings(self, name: str) -> dict[str, Any]: ...
    def refresh(self, name: str) -> None: ...
    def replaced_docs_releasable(self, name: str) -> bool: ...
    def force_merge(
        self,
        name: str,
        *,
        max_segments: int | None = 1,
        timeout_s: float = 600.0,
        expunge_deletes: bool = False,
    ) -> None: ...
    def list_indices(self, pattern: str) -> list[IndexStats]: ...
    def alias_targets(self, alias: str) -> list[str]: ...
    def point_alias(self, alias: str, index: str) -> None: ...
    def put_index_template(self, name: str, body: Mapping[str, Any]) -> None: ...
    def delete_index_template(self, name: str, *, missing_ok: bool = False) -> bool: ...

    # -- documents and searches
    def bulk(self, payload: bytes, *, timeout_s: float | None = None) -> BulkResult: ...
    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int: ...
    def search(
        self, index: str, body: Mapping[str, Any] | bytes, *, timeout_s: float | None = None
    ) -> SearchResult: ...
    def msearch(
        self,
        index: str,
        bodies: Sequence[Mapping[str, Any]],
        *,
        timeout_s: float | None = None,
        source_fields: Sequence[str] = (),
        stored_templates: bool = False,
    ) -> list[SearchResult]:
        """One msearch of ``bodies`` on ``index``: ids and scores come back, and the ``_source``
        fields named in ``source_fields`` (the bodies must ask for them). ``stored_templates``: the
        bodies are ``{"id": ..., "params": ...}`` of stored search templates (``_msearch/template``;
        :class:`~base.CapabilityMissing` where the cluster has no lang-mustache)."""
        ...

    def scan(
        self,
        index: str,
        query: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] = (),
        page_size: int = 1000,
    ) -> Iterator[Hit]:
        """Every matching document of ``index`` (a scroll), ``_source`` limited to ``fields`` when given."""
        ...

    def rank_eval(
        self, index: str, requests: Sequence[RatedRequest], metric: Mapping[str, Any]
    ) -> RankEvalResult:
        """The engine's ``_rank_eval`` of rated searches; :class:`~base.CapabilityMissing` without the
        rank-eval module (probe feature ``rank_eval``)."""
        ...

    def put_stored_template(self, template_id: str, source: str) -> None: ...

    def get_sources(
        self, index: str, ids: Sequence[str], fields: Sequence[str]
    ) -> dict[str, dict[str, Any]]: ...

    # -- search pipelines (OpenSearch's: CapabilityMissing elsewhere)
    def search_pipeline(self, name: str) -> dict[str, Any]:
        """The definition of the search pipeline ``name``; a :class:`~base.ConfigError` naming the cluster's
        pipelines when there is none by that name."""
        ...

    def put_search_pipeline(self, name: str, body: Mapping[str, Any]) -> None: ...

    def default_search_pipeline(self, index: str) -> str | None:
        """The index's default search pipeline (``index.search.default_pipeline``); None without one."""
        ...

    # -- mapping dialect (the query dialect is QueryDialect's)
    def vector_mapping(self, spec: VectorSpec) -> dict[str, Any]: ...
    def vector_dims(self, field: Mapping[str, Any]) -> int | None:
        """The dimensions of an existing vector field's mapping; None when it is not a vector field."""
        ...
