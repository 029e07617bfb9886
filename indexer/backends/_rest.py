"""The REST logic both engines share, over a per-backend transport: the cluster, the probe's common steps.

A backend subclass supplies ``_call`` (one request through its own client, its exceptions translated to
ours), its dialects and its product's probe steps. Index administration (:mod:`._rest_admin`) and
documents and searches (:mod:`._rest_search`) are the same REST API on Elasticsearch and OpenSearch and
are written once there; this module adds what is about the cluster: what it is (:meth:`info`, from
detection), its health (none on a serverless service), and what it can do (:meth:`probe`, from the
declarations of :mod:`._features` and read-only requests).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Protocol

from base import CapabilityMissing, ConfigError, RequestFailed
from indexer.backends._features import DISPLAY, SERVERLESS, declared_features
from indexer.backends._rest_admin import IndexAdministration
from indexer.backends._rest_search import Searching
from indexer.backends._transport import dumps, ndjson, query_params, segment
from indexer.backends._types import (
    APPROXIMATE_KNN,
    FUSION_KINDS,
    KNN,
    SCRIPT_SCORE_KNN,
    SEARCH_PIPELINE,
    Capabilities,
    ClusterHealth,
    EngineInfo,
    FusionParams,
    KnnSpec,
    VectorSpec,
)

#: an index pattern that matches nothing: read-only probes search it (allow_no_indices)
PROBE_PATTERN = "r2med-capability-probe-no-such-index*"
#: the health a serverless service reports (it has no _cluster/health: the service keeps itself up)
SERVERLESS_HEALTH = ClusterHealth(status="serverless", nodes=0)

__all__ = ["PROBE_PATTERN", "FusionBody", "RestBackend", "dumps", "ndjson"]


class FusionBody(Protocol):
    """Builds the search body of one engine-side fusion kind."""

    def __call__(self, lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams) -> dict[str, Any]: ...


class RestBackend(IndexAdministration, Searching):
    """Shared REST logic; subclasses are the Elasticsearch and OpenSearch backends."""

    #: engine-side fusion kind -> its body builder (each backend registers the kinds its engine has)
    FUSIONS: ClassVar[dict[str, FusionBody]] = {}

    # -- dialects and probe (per backend)
    @abstractmethod
    def vector_mapping(self, spec: VectorSpec) -> dict[str, Any]: ...

    @abstractmethod
    def knn_search(self, knn: KnnSpec) -> dict[str, Any]: ...

    @abstractmethod
    def weighted_sum(
        self,
        lexical: Mapping[str, Any],
        knn: KnnSpec,
        *,
        lexical_weight: float,
        vector_weight: float,
        bm25_k1: float | None = None,
    ) -> dict[str, Any]: ...

    @abstractmethod
    def vector_dims(self, field: Mapping[str, Any]) -> int | None: ...

    @abstractmethod
    def bm25_scale(self, k1: float) -> float: ...

    @abstractmethod
    def _probe(self) -> Capabilities: ...

    @property
    def template_dialect(self) -> str:
        """The name of this cluster's built-in templates (``vector-<dialect>.mustache``): the product, or
        ``elasticsearch-exact`` where kNN is served exactly (script_score)."""
        return self.product

    def fusion_search(
        self, kind: str, lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams
    ) -> dict[str, Any]:
        if kind not in FUSION_KINDS:
            raise ConfigError(
                f"unknown engine-side fusion {kind!r}: expected one of {', '.join(FUSION_KINDS)}"
            )
        self.probe().require(FUSION_KINDS[kind])
        build = self.FUSIONS.get(kind)
        if build is None:  # the probe said yes, but this backend cannot write it
            raise CapabilityMissing(f"the {self.display} backend has no {kind!r} fusion")
        return build(lexical, knn, params)

    # -- search pipelines (OpenSearch's; the probe says why not elsewhere)
    def search_pipeline(self, name: str) -> dict[str, Any]:
        self.probe().require(SEARCH_PIPELINE)
        raise CapabilityMissing(f"the {self.display} backend reads no search pipelines")

    def put_search_pipeline(self, name: str, body: Mapping[str, Any]) -> None:
        self.probe().require(SEARCH_PIPELINE)
        raise CapabilityMissing(f"the {self.display} backend writes no search pipelines")

    def default_search_pipeline(self, index: str) -> str | None:
        return None

    # -- the cluster
    def info(self) -> EngineInfo:
        """What the cluster is: what detection found, else the local node's nodes info."""
        if self.server is not None:
            return self.server
        local = next(iter(self._nodes_info().values()))
        build = local.get("build_flavor") or local.get("build_type") or "unknown"
        return EngineInfo(
            product=self.product, version=str(local.get("version", "0")), build_flavour=str(build)
        )

    def _nodes_info(self, metric: str = "") -> dict[str, Any]:
        path = "/_nodes/_local" + (f"/{metric}" if metric else "")
        nodes: dict[str, Any] = self._call("GET", path, what="reading nodes info")["nodes"]
        return nodes

    def health(
        self, *, index: str | None = None, wait_for_status: str | None = None, timeout_s: float = 30.0
    ) -> ClusterHealth:
        """The cluster's health (``wait_for_status``: wait for it); a serverless service has none to ask."""
        if self.serverless:
            return SERVERLESS_HEALTH
        path = "/_cluster/health" + (f"/{segment(index)}" if index else "")
        params = query_params(wait_for_status=wait_for_status, timeout=f"{int(timeout_s)}s")
        what = f"waiting for {wait_for_status} health" if wait_for_status else "reading cluster health"
        try:
            body = self._call("GET", path, what=what, params=params, timeout_s=timeout_s + 10)
        except RequestFailed as exc:
            if exc.status != 408:  # Elasticsearch answers a health wait that timed out with 408
                raise
            body = self._call("GET", path, what="reading cluster health") | {"timed_out": True}
        return ClusterHealth(
            status=str(body["status"]),
            nodes=int(body.get("number_of_nodes", 1)),
            timed_out=bool(body.get("timed_out", False)),
        )

    def probe(self) -> Capabilities:
        """Ask the cluster (read-only, creates nothing); cached for this backend's life."""
        if self._caps is None:
            self._caps = self._probe()
        return self._caps

    # -- the probe's common steps
    def _local_node(self) -> tuple[EngineInfo, tuple[str, ...] | None]:
        """What the cluster is, and the modules and plugins its local node lists (None: serverless, which
        has no _nodes: the declarations of the service stand)."""
        info = self.info()
        if self.serverless:
            return info, None
        local = next(iter(self._nodes_info("plugins").values()))
        names = [m["name"] for m in local.get("modules", [])] + [p["name"] for p in local.get("plugins", [])]
        if self.server is None:
            build = local.get("build_flavor") or local.get("build_type") or info.build_flavour
            info = EngineInfo(self.product, str(local.get("version", info.version)), str(build))
        return info, tuple(sorted(names))

    def _declared(
        self, info: EngineInfo, modules: Iterable[str] | None
    ) -> tuple[dict[str, bool], dict[str, str]]:
        return declared_features(self.product, info.version, modules, serverless=info.serverless)

    def _search_ok(self, body: Mapping[str, Any], what: str, params: Mapping[str, str] | None = None) -> bool:
        """Whether the cluster takes ``body`` (searched over no index: nothing is read or created)."""
        try:
            self._call(
                "POST",
                f"/{PROBE_PATTERN}/_search",
                what=what,
                params={"allow_no_indices": "true", **(params or {})},
                body={**body, "size": 1},
            )
        except RequestFailed:
            return False
        return True

    def _analyze_ok(self, body: Mapping[str, Any]) -> bool:
        try:
            self._call(
                "POST", "/_analyze", what="probing an analyzer", body={**body, "text": "running probes"}
            )
        except RequestFailed:
            return False
        return True

    def _analyzers(self) -> dict[str, bool]:
        return {
            "english": self._analyze_ok({"analyzer": "english"}),
            "standard": self._analyze_ok({"analyzer": "standard"}),
            "hunspell_en_US": self._analyze_ok(
                {"tokenizer": "standard", "filter": [{"type": "hunspell", "locale": "en_US"}]}
            ),
            "porter_stem": self._analyze_ok({"tokenizer": "standard", "filter": ["porter_stem"]}),
        }

    def _serverless_note(self) -> str:
        return (
            f"serverless mode ({SERVERLESS[self.product]}): only the service's APIs are used: no health wait, "
            "no _nodes, no shard or replica settings, no force-merge"
        )


def settle_knn(features: dict[str, bool], missing: dict[str, str]) -> None:
    """``knn`` (what the vector arms need) after the probe confirmed or refused its two ways."""
    features[KNN] = features[APPROXIMATE_KNN] or features[SCRIPT_SCORE_KNN]
    if features[KNN]:
        missing.pop(KNN, None)
    else:
        missing.setdefault(KNN, f"{missing[APPROXIMATE_KNN]}, and {missing[SCRIPT_SCORE_KNN]}")


def product_display(product: str) -> str:
    return DISPLAY[product]
