"""The Elasticsearch backend: elasticsearch-py as the transport, Elasticsearch's dialects and probe.

Mapping dialect: ``dense_vector`` with ``similarity`` and ``index_options``.
Query dialect: kNN is a top-level ``knn`` section beside ``query``; an in-engine
weighted sum is ``query`` and ``knn`` each with a ``boost`` (Elasticsearch adds
the two scores of a document found by both). Engine-side fusion: the ``rrf`` and
``linear`` retrievers (where the probe finds them; the stripped integ-test build has
neither).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout, SerializationError, TlsError, TransportError
from elasticsearch import ApiError, Elasticsearch, UnsupportedProductError

from base import ConfigError, HarnessError, NotFound, RequestFailed, UnsupportedEngine
from indexer._connection import ConnectionSettings
from indexer.backends._errors import auth_label, http_failure, retry_after, short, unreachable, untrusted
from indexer.backends._rest import FusionBody, RestBackend
from indexer.backends._types import (
    HYBRID_QUERY,
    KNN,
    LINEAR_RETRIEVER,
    RANK_EVAL,
    RRF_RETRIEVER,
    SEARCH_TEMPLATE,
    Capabilities,
    FusionParams,
    KnnSpec,
    VectorSpec,
    version_tuple,
)

PROBE_PATTERN = "r2med-capability-probe-no-such-index*"
#: dense_vector index types Elasticsearch offers, by the version that brought them
_INDEX_TYPES: tuple[tuple[tuple[int, ...], tuple[str, ...]], ...] = (
    ((8, 0), ("hnsw", "flat")),
    ((8, 12), ("int8_hnsw", "int8_flat")),
    ((8, 15), ("int4_hnsw", "int4_flat")),
    ((8, 18), ("bbq_hnsw", "bbq_flat")),
)
_JSON = {"accept": "application/json", "content-type": "application/json"}
_NDJSON = {"accept": "application/json", "content-type": "application/x-ndjson"}


def build_client(settings: ConnectionSettings, **overrides: Any) -> Elasticsearch:
    """An Elasticsearch client for ``settings`` (no request is sent yet)."""
    kwargs: dict[str, Any] = {
        "hosts": [settings.url],
        "request_timeout": settings.request_timeout,
        "retry_on_timeout": True,
        "max_retries": 3,
    }
    if settings.username is not None:
        kwargs["basic_auth"] = (settings.username, settings.password.reveal() if settings.password else "")
    if settings.api_key is not None:
        kwargs["api_key"] = settings.api_key.reveal()
    if settings.url.startswith("https"):
        kwargs["verify_certs"] = settings.verify
        if settings.ca_cert is not None:
            kwargs["ca_certs"] = str(settings.ca_cert)
        if not settings.verify:
            kwargs["ssl_show_warn"] = False
    kwargs.update(overrides)
    return Elasticsearch(**kwargs)


def _retrievers(lexical: Mapping[str, Any], knn: KnnSpec) -> list[dict[str, Any]]:
    return [{"standard": {"query": dict(lexical)}}, {"knn": _knn(knn)}]


def _rrf(lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams) -> dict[str, Any]:
    return {
        "retriever": {
            "rrf": {
                "retrievers": _retrievers(lexical, knn),
                "rank_window_size": params.window,
                "rank_constant": params.rank_constant,
            }
        }
    }


def _linear(lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams) -> dict[str, Any]:
    return {
        "retriever": {
            "linear": {
                "retrievers": [
                    {"retriever": r, "weight": w, "normalizer": "minmax"}
                    for r, w in zip(_retrievers(lexical, knn), params.weights, strict=True)
                ],
                "rank_window_size": params.window,
            }
        }
    }


class ElasticsearchBackend(RestBackend):
    product: ClassVar[str] = "elasticsearch"
    display: ClassVar[str] = "Elasticsearch"
    FUSIONS: ClassVar[dict[str, FusionBody]] = {"rrf": _rrf, "linear": _linear}

    def __init__(self, settings: ConnectionSettings, client: Elasticsearch | None = None) -> None:
        super().__init__(settings)
        self._client = client or build_client(settings)
        # bulk and msearch: the caller paces retries, the client must not retry behind its back
        self._once = self._client.options(max_retries=0, retry_on_status=(), retry_on_timeout=False)

    def close(self) -> None:
        self._client.close()

    def _call(
        self,
        method: str,
        path: str,
        *,
        what: str,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        ndjson_body: bool = False,
        timeout_s: float | None = None,
        once: bool = False,
    ) -> Any:
        client = self._once if once else self._client
        if timeout_s is not None:
            client = client.options(request_timeout=timeout_s)
        try:
            resp = client.perform_request(
                method, path, params=params or None, headers=_NDJSON if ndjson_body else _JSON, body=body
            )
        except (ApiError, TransportError) as exc:
            raise self._translate(exc, what) from None
        if method == "HEAD":
            if resp.meta.status == 404:
                raise NotFound(f"{what}: not found", status=404)
            return None
        return resp.body

    def _translate(self, exc: ApiError | TransportError, what: str) -> HarnessError:
        """The one map from elasticsearch-py's exceptions to ours."""
        if isinstance(exc, UnsupportedProductError):
            return UnsupportedEngine(
                f"{self.url} is not Elasticsearch (its answers lack the X-Elastic-Product header): "
                "let the harness detect the engine instead of naming it"
            )
        if isinstance(exc, ApiError):
            return http_failure(
                exc.meta.status,
                exc.body,
                what=what,
                url=self.url,
                product=self.display,
                auth=auth_label(self.settings),
                retry_after_s=retry_after(exc.meta.headers.get("retry-after")),
            )
        if isinstance(exc, TlsError):
            return untrusted(exc, url=self.url)
        if isinstance(exc, (TransportConnectionError, ConnectionTimeout)):
            return unreachable(
                exc, what=what, url=self.url, product=self.display, timeout=isinstance(exc, ConnectionTimeout)
            )
        if isinstance(exc, SerializationError):
            return RequestFailed(
                f"{self.display} at {self.url} sent an unreadable answer while {what}: {short(exc)}"
            )
        return RequestFailed(f"{self.display} at {self.url} failed while {what}: {short(exc)}")

    # -- dialects
    def vector_mapping(self, spec: VectorSpec) -> dict[str, Any]:
        if spec.engine not in (None, "lucene"):
            raise ConfigError(f"Elasticsearch has no k-NN engine choice; found engine {spec.engine!r}")
        options: dict[str, Any] = {"type": spec.index_type}
        if spec.index_type.endswith("hnsw"):
            options.update(m=spec.m, ef_construction=spec.ef_construction)
        return {
            "type": "dense_vector",
            "dims": spec.dims,
            "index": True,
            "similarity": spec.similarity,
            "index_options": options,
        }

    def vector_dims(self, field: Mapping[str, Any]) -> int | None:
        return int(field["dims"]) if field.get("type") == "dense_vector" and "dims" in field else None

    def knn_search(self, knn: KnnSpec) -> dict[str, Any]:
        return {"knn": _knn(knn)}

    def bm25_scale(self, k1: float) -> float:
        return 1.0

    def weighted_sum(
        self,
        lexical: Mapping[str, Any],
        knn: KnnSpec,
        *,
        lexical_weight: float,
        vector_weight: float,
        bm25_k1: float | None = None,
    ) -> dict[str, Any]:
        """``query`` and ``knn``, each boosted; Elasticsearch adds the two scores (``bm25_k1``: see OpenSearch's)."""
        return {
            "query": {"bool": {"must": [dict(lexical)], "boost": lexical_weight}},
            "knn": {**_knn(knn), "boost": vector_weight},
        }

    # -- probe
    def _probe(self) -> Capabilities:
        local = next(iter(self._nodes_info("plugins").values()))
        version = str(local.get("version", "0"))
        modules = tuple(
            sorted(m["name"] for m in local.get("modules", []))
            + sorted(p["name"] for p in local.get("plugins", []))
        )
        health = self.health()
        try:
            license_type = str(self._call("GET", "/_license", what="reading the license")["license"]["type"])
        except (RequestFailed, KeyError):
            license_type = "unknown"
        analyzers = self._analyzers()
        sub: list[dict[str, Any]] = [{"standard": {"query": {"match_all": {}}}}] * 2
        retrievers = {
            "rrf": self._retriever_ok({"rrf": {"retrievers": sub}}),
            "linear": self._retriever_ok(
                {"linear": {"retrievers": [{"retriever": r, "weight": 1.0} for r in sub]}}
            ),
        }
        vt = version_tuple(version)
        types = tuple(t for since, names in _INDEX_TYPES if vt >= since for t in names)
        features = {
            KNN: vt >= (8, 0),
            HYBRID_QUERY: False,
            SEARCH_TEMPLATE: "lang-mustache" in modules,
            RRF_RETRIEVER: retrievers["rrf"],
            LINEAR_RETRIEVER: retrievers["linear"],
            RANK_EVAL: "rank-eval" in modules,
        }
        missing = {
            KNN: f"Elasticsearch {version} has no dense_vector kNN search (8.0 or newer needed)",
            HYBRID_QUERY: "the `hybrid` query is OpenSearch's (neural-search plugin); Elasticsearch fuses "
            "with the rrf/linear retrievers",
            SEARCH_TEMPLATE: "the cluster has no lang-mustache module: search templates cannot run",
            RRF_RETRIEVER: f"Elasticsearch {version} ({local.get('build_flavor', 'unknown')} build) has no "
            "'rrf' retriever (a licensed feature, absent from the integ-test build)",
            LINEAR_RETRIEVER: f"Elasticsearch {version} ({local.get('build_flavor', 'unknown')} build) has no "
            "'linear' retriever (a licensed feature, absent from the integ-test build)",
            RANK_EVAL: f"Elasticsearch {version} ({local.get('build_flavor', 'unknown')} build) has no rank-eval "
            "module (stripped builds ship without it): the engine cannot score rated searches (_rank_eval)",
        }
        notes = []
        if not analyzers["english"]:
            notes.append(
                "no 'english' analyzer (analysis-common missing): the index falls back to hunspell "
                "(or standard+stop without a hunspell dictionary)"
            )
        if not retrievers["rrf"]:
            notes.append(
                "no 'rrf'/'linear' retrievers: hybrid is fused on the client, and in the engine by a weighted sum"
            )
        return Capabilities(
            version=version,
            flavour=self.product,
            build_flavour=str(local.get("build_flavor", "unknown")),
            modules=modules,
            analyzers=analyzers,
            retrievers=retrievers,
            license=license_type,
            vector_index_types=types,
            nodes=health.nodes,
            notes=tuple(notes),
            features=features,
            missing={k: v for k, v in missing.items() if not features[k]},
        )

    def _retriever_ok(self, retriever: dict[str, Any]) -> bool:
        try:
            self._call(
                "POST",
                f"/{PROBE_PATTERN}/_search",
                what="probing a retriever",
                params={"allow_no_indices": "true"},
                body={"retriever": retriever, "size": 1},
            )
        except RequestFailed:
            return False
        return True


def _knn(knn: KnnSpec) -> dict[str, Any]:
    return {
        "field": knn.field,
        "query_vector": list(knn.vector),
        "k": knn.k,
        "num_candidates": knn.num_candidates,
    }
