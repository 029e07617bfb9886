"""The Elasticsearch backend: elasticsearch-py as the transport, Elasticsearch's dialects and probe.

One client for 7.17, 8.x and 9.x: elasticsearch-py 9 rewrites ``application/json`` into its own major's
REST compatibility (``compatible-with=9``), which 7.x and 8.x servers refuse; it leaves an explicit
``application/vnd.elasticsearch+json; compatible-with=N`` alone. So every request carries the compatibility
of the server's own major, which detection asked first (``GET /``). A serverless project gets the client's
serverless mode (its API version header, plain JSON).

Mapping dialect: ``dense_vector`` with ``similarity`` and ``index_options`` (8.x and 9.x); on 7.x a
``dense_vector`` has only ``dims`` (no index: kNN there is exact). Query dialect: kNN is a top-level ``knn``
section beside ``query`` (8.4 and newer); where there is none, an exact ``script_score`` over the vector
field (cosine, scored as ``(1 + cos) / 2``, the ``dot_product`` similarity's score on unit vectors). An
in-engine weighted sum is ``query`` and ``knn`` each with a ``boost``. Engine-side fusion: the ``rrf`` and
``linear`` retrievers (where the probe finds them; the stripped integ-test build has neither).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout, SerializationError, TlsError, TransportError
from elasticsearch import ApiError, Elasticsearch, UnsupportedProductError

from base import CapabilityMissing, ConfigError, HarnessError, NotFound, RequestFailed, UnsupportedEngine
from indexer._connection import ConnectionSettings
from indexer.backends._errors import auth_label, http_failure, retry_after, short, unreachable, untrusted
from indexer.backends._features import declared_features
from indexer.backends._rest import FusionBody, RestBackend, settle_knn
from indexer.backends._types import (
    APPROXIMATE_KNN,
    KNN,
    LINEAR_RETRIEVER,
    RRF_RETRIEVER,
    SCRIPT_SCORE_KNN,
    Capabilities,
    EngineInfo,
    FusionParams,
    KnnSpec,
    VectorSpec,
)

#: dense_vector index types Elasticsearch offers, and the feature that declares each (None: 8.0's own)
_INDEX_TYPES: tuple[tuple[str | None, tuple[str, ...]], ...] = (
    (None, ("hnsw", "flat")),
    ("int8_hnsw", ("int8_hnsw", "int8_flat")),
    ("int4_hnsw", ("int4_hnsw", "int4_flat")),
    ("bbq_hnsw", ("bbq_hnsw", "bbq_flat")),
)
#: the most dimensions a 7.x dense_vector takes
DIMS_7X = 2048
EXACT_SIMILARITIES = frozenset({"dot_product", "cosine"})
SCRIPT_SCORE = "(cosineSimilarity(params.query_vector, '{field}') + 1.0) / 2.0"


def media_types(major: int | None) -> tuple[dict[str, str], dict[str, str]]:
    """(JSON, NDJSON) headers for a server of ``major`` (None: the client's own, rewritten by it)."""
    if major is None:
        return (
            {"accept": "application/json", "content-type": "application/json"},
            {"accept": "application/json", "content-type": "application/x-ndjson"},
        )
    compat = f"; compatible-with={major}"
    return (
        {
            "accept": "application/vnd.elasticsearch+json" + compat,
            "content-type": "application/vnd.elasticsearch+json" + compat,
        },
        {
            "accept": "application/vnd.elasticsearch+json" + compat,
            "content-type": "application/vnd.elasticsearch+x-ndjson" + compat,
        },
    )


def build_client(
    settings: ConnectionSettings, *, serverless: bool = False, **overrides: Any
) -> Elasticsearch:
    """An Elasticsearch client for ``settings`` (no request is sent yet)."""
    kwargs: dict[str, Any] = {
        "hosts": [settings.url],
        "request_timeout": settings.request_timeout,
        "retry_on_timeout": True,
        "max_retries": 3,
    }
    if serverless:
        kwargs["server_mode"] = "serverless"
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

    def __init__(
        self,
        settings: ConnectionSettings,
        server: EngineInfo | None = None,
        client: Elasticsearch | None = None,
    ) -> None:
        super().__init__(settings, server)
        serverless = server is not None and server.serverless
        self._client = client or build_client(settings, serverless=serverless)
        # bulk and msearch: the caller paces retries, the client must not retry behind its back
        self._once = self._client.options(max_retries=0, retry_on_status=(), retry_on_timeout=False)
        # the server's own major, asked first (serverless: the client's serverless mode sends plain JSON)
        major = server.major if server is not None and server.version and not serverless else None
        self._json, self._ndjson = media_types(major)

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
                method,
                path,
                params=params or None,
                headers=self._ndjson if ndjson_body else self._json,
                body=body,
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
    @property
    def exact_knn(self) -> bool:
        """kNN is served exactly (script_score): the version has no approximate kNN in _search (decided from
        the version detection found, so a backend that sends nothing can still write bodies)."""
        server = self.server
        if server is None or server.serverless or not server.version:
            return False
        return not declared_features(self.product, server.version)[0][APPROXIMATE_KNN]

    @property
    def template_dialect(self) -> str:
        return "elasticsearch-exact" if self.exact_knn else self.product

    def vector_mapping(self, spec: VectorSpec) -> dict[str, Any]:
        if spec.engine not in (None, "lucene"):
            raise ConfigError(f"Elasticsearch has no k-NN engine choice; found engine {spec.engine!r}")
        caps = self.probe()
        caps.require(KNN)
        if caps.major < 8:  # 7.x: dims only (no index, no similarity): kNN is exact, by script_score
            return self._exact_mapping(spec, caps)
        if spec.index_type not in caps.vector_index_types:
            raise CapabilityMissing(
                f"Elasticsearch {caps.version} at {self.url} has no vector index type {spec.index_type!r}: "
                f"expected one of {', '.join(caps.vector_index_types)}"
            )
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

    def _exact_mapping(self, spec: VectorSpec, caps: Capabilities) -> dict[str, Any]:
        if spec.index_type != "hnsw":
            raise CapabilityMissing(
                f"Elasticsearch {caps.version} at {self.url} has no vector index types (kNN there is exact, by "
                f"script_score): expected the default hnsw, found {spec.index_type!r}"
            )
        if spec.dims > DIMS_7X or spec.similarity not in EXACT_SIMILARITIES:
            raise CapabilityMissing(
                f"Elasticsearch {caps.version} at {self.url} scores kNN exactly by cosine over at most {DIMS_7X} "
                f"dimensions: expected dot_product or cosine on <= {DIMS_7X} dims, found {spec.similarity} on "
                f"{spec.dims}"
            )
        return {"type": "dense_vector", "dims": spec.dims}

    def vector_dims(self, field: Mapping[str, Any]) -> int | None:
        return int(field["dims"]) if field.get("type") == "dense_vector" and "dims" in field else None

    def knn_search(self, knn: KnnSpec) -> dict[str, Any]:
        self.probe().require(KNN)
        if self.exact_knn:
            return {"query": _script_score(knn)}
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
        self.probe().require(APPROXIMATE_KNN)
        return {
            "query": {"bool": {"must": [dict(lexical)], "boost": lexical_weight}},
            "knn": {**_knn(knn), "boost": vector_weight},
        }

    # -- probe
    def _probe(self) -> Capabilities:
        info, modules = self._local_node()
        features, missing = self._declared(info, modules)
        build = info.build_flavour
        for feature, retriever in ((RRF_RETRIEVER, "rrf"), (LINEAR_RETRIEVER, "linear")):
            if features[feature] and not self._retriever_ok(retriever):
                features[feature] = False
                missing[feature] = (
                    f"Elasticsearch {info.version} ({build} build) has no '{retriever}' retriever (a licensed "
                    "feature, absent from the integ-test build)"
                )
        if info.major < 8 and not info.serverless and not self._dense_vector_ok():
            painless = "no lang-painless module and " if not features[SCRIPT_SCORE_KNN] else ""
            features[SCRIPT_SCORE_KNN] = False
            missing[SCRIPT_SCORE_KNN] = (
                f"Elasticsearch {info.version} ({build} build) has {painless}no dense_vector field type (the x-pack "
                "vectors module; stripped builds ship neither): exact kNN by script_score cannot run"
            )
            missing.pop(KNN, None)
        settle_knn(features, missing)
        analyzers = self._analyzers()
        return Capabilities(
            version=info.version,
            flavour=self.product,
            build_flavour=build,
            modules=modules or (),
            analyzers=analyzers,
            retrievers={"rrf": features[RRF_RETRIEVER], "linear": features[LINEAR_RETRIEVER]},
            license=self._license(),
            vector_index_types=_index_types(features) if info.major >= 8 or info.serverless else (),
            nodes=self.health().nodes,
            notes=self._notes(info, features, missing, analyzers),
            features=features,
            missing=missing,
            serverless=info.serverless,
        )

    def _license(self) -> str:
        if self.serverless:
            return "serverless"
        try:
            return str(self._call("GET", "/_license", what="reading the license")["license"]["type"])
        except (RequestFailed, KeyError):
            return "unknown"

    def _notes(
        self,
        info: EngineInfo,
        features: Mapping[str, bool],
        missing: Mapping[str, str],
        analyzers: Mapping[str, bool],
    ) -> tuple[str, ...]:
        notes = [self._serverless_note()] if info.serverless else []
        if not analyzers["english"]:
            notes.append(
                "no 'english' analyzer (analysis-common missing): the index falls back to hunspell "
                "(or standard+stop without a hunspell dictionary)"
            )
        if not features[APPROXIMATE_KNN] and features[SCRIPT_SCORE_KNN]:
            notes.append(
                f"{missing[APPROXIMATE_KNN]}: the vector arms run as exact kNN (script_score over every "
                "document's dense_vector), the in-engine arms are skipped"
            )
        elif not features[KNN]:
            notes.append(missing[KNN])
        elif not features[RRF_RETRIEVER]:
            notes.append(
                "no 'rrf'/'linear' retrievers: hybrid is fused on the client, and in the engine by a weighted sum"
            )
        return tuple(notes)

    def _retriever_ok(self, name: str) -> bool:
        sub: list[dict[str, Any]] = [{"standard": {"query": {"match_all": {}}}}] * 2
        retriever: dict[str, Any] = (
            {"rrf": {"retrievers": sub}}
            if name == "rrf"
            else {"linear": {"retrievers": [{"retriever": r, "weight": 1.0} for r in sub]}}
        )
        return self._search_ok({"retriever": retriever}, "probing a retriever")

    def _dense_vector_ok(self) -> bool:
        """Whether the cluster knows the dense_vector type (a simulated template: nothing is created)."""
        body = {
            "index_patterns": ["r2med-capability-probe-*"],
            "template": {"mappings": {"properties": {"v": {"type": "dense_vector", "dims": 2}}}},
        }
        try:
            self._call("POST", "/_index_template/_simulate", what="probing the dense_vector type", body=body)
        except RequestFailed:
            return False
        return True


def _index_types(features: Mapping[str, bool]) -> tuple[str, ...]:
    return tuple(t for feature, names in _INDEX_TYPES if feature is None or features[feature] for t in names)


def _knn(knn: KnnSpec) -> dict[str, Any]:
    return {
        "field": knn.field,
        "query_vector": list(knn.vector),
        "k": knn.k,
        "num_candidates": knn.num_candidates,
    }


def _script_score(knn: KnnSpec) -> dict[str, Any]:
    """Exact kNN: every document with the field scored by cosine, as ``dot_product`` scores unit vectors."""
    return {
        "script_score": {
            "query": {"exists": {"field": knn.field}},
            "script": {
                "source": SCRIPT_SCORE.format(field=knn.field),
                "params": {"query_vector": list(knn.vector)},
            },
        }
    }
