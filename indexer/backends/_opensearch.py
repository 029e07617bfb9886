"""The OpenSearch backend: opensearch-py as the transport, OpenSearch's dialects and probe.

Mapping dialect: ``knn_vector`` with ``dimension`` and a ``method``
``{name: hnsw, engine: lucene, space_type, parameters: {m, ef_construction}}``;
new indices get ``index.knn: true`` (a static setting, so vector fields can be
added later). The harness builds on ``lucene`` unless told (``--knn-engine``), and on
``faiss`` where the probe finds it: the faiss engine needs the k-NN plugin's native
libraries, which the Maven k-NN zip lacks (indexing one document into a faiss field
there kills the node: UnsatisfiedLinkError), so a node that lacks them says so in
its attributes (``node.attr.knn_faiss: false``, written by the managed node) and the
probe reports faiss missing. ``nmslib`` is deprecated (2.19) and refused.

Similarity: Elasticsearch's ``dot_product`` requires unit vectors and scores
``(1 + dot) / 2``; on unit vectors that is exactly Lucene's cosine score, which
OpenSearch's ``cosinesimil`` gives (``innerproduct`` would score ``1 + dot``,
another scale). So ``dot_product`` maps to ``cosinesimil``, and the same
document gets the same kNN score on both engines: an in-engine weighted sum means
the same thing on either.

Query dialect: kNN is a ``knn`` query clause (``k``, and ``method_parameters.ef_search``
for Elasticsearch's ``num_candidates``); the in-engine weighted sum is a
``bool.should`` of the boosted lexical query and the boosted ``knn`` clause.

Engine-side fusion: the neural-search plugin's ``hybrid`` query with a named, default or
the harness's own search pipeline (:mod:`._os_hybrid`); only where the probe finds the
plugin (the integ-test build has none). SigV4 (Amazon OpenSearch Service and Serverless):
every request is signed by :class:`~indexer.backends._sigv4.SigV4Signer`.

BM25: OpenSearch scores as Lucene's BM25Similarity, Elasticsearch as its legacy
BM25 with the ``(k1 + 1)`` factor kept: the same document scores ``(1 + k1)``
times higher on Elasticsearch (2.2 for k1=1.2), with the same ranking.
``weighted_sum(..., bm25_k1=k1)`` compensates, so a weighted sum means the
same on both engines.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import quote

from opensearchpy import OpenSearch, Urllib3HttpConnection
from opensearchpy.exceptions import (
    ConnectionError as OSConnectionError,
)
from opensearchpy.exceptions import (
    ConnectionTimeout,
    SerializationError,
    SSLError,
    TransportError,
)

from base import CapabilityMissing, ConfigError, HarnessError, NotFound, RequestFailed
from indexer._connection import ConnectionSettings
from indexer.backends._errors import auth_label, http_failure, retry_after, short, unreachable, untrusted
from indexer.backends._features import KNN_PLUGIN
from indexer.backends._os_hybrid import UNNORMALIZED, harness_pipeline, require_technique, unnormalized
from indexer.backends._rest import FusionBody, RestBackend, settle_knn
from indexer.backends._types import (
    FAISS_ENGINE,
    HYBRID_QUERY,
    KNN,
    LUCENE_ENGINE,
    NORMALIZATION_PROCESSOR,
    RRF_PROCESSOR,
    SEARCH_PIPELINE,
    SEARCH_TEMPLATE,
    Z_SCORE,
    Capabilities,
    EngineInfo,
    FusionParams,
    KnnSpec,
    SearchResult,
    VectorSpec,
    version_tuple,
)

SECURITY_PLUGIN = "opensearch-security"
#: the node attribute a node without the k-NN plugin's native libraries carries (the managed node writes it)
FAISS_ATTRIBUTE = "knn_faiss"
#: Elasticsearch similarity -> OpenSearch space_type (see the module docstring for dot_product)
SPACE_TYPES: dict[str, str] = {
    "dot_product": "cosinesimil",
    "cosine": "cosinesimil",
    "l2_norm": "l2",
    "max_inner_product": "innerproduct",
}
#: k-NN engine -> the feature that says the cluster has it (nmslib: refused, deprecated since 2.19)
KNN_ENGINE_FEATURES = {"lucene": LUCENE_ENGINE, "faiss": FAISS_ENGINE}
TESTED_VERSION = "3.5.0"
_JSON = {"accept": "application/json", "content-type": "application/json"}
_NDJSON = {"accept": "application/json", "content-type": "application/x-ndjson"}


_EVERY_STATUS = range(100, 600)
_RETRY_AFTER = "r2med_retry_after"


class _Connection(Urllib3HttpConnection):
    """opensearch-py's urllib3 connection, keeping an error answer's ``Retry-After`` on its exception.

    opensearch-py drops the headers of an error answer; the shared Retry honours a server's
    ``Retry-After`` (a proxy or gateway in front of the cluster may send one), so it is kept here.
    """

    def perform_request(
        self,
        method: str,
        url: str,
        params: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        timeout: float | None = None,
        ignore: Any = (),
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        status, answer_headers, raw = super().perform_request(
            method, url, params, body, timeout=timeout, ignore=_EVERY_STATUS, headers=headers
        )
        if not 200 <= status < 300 and status not in ignore:
            try:
                self._raise_error(status, raw, answer_headers.get("content-type"))
            except TransportError as exc:
                setattr(exc, _RETRY_AFTER, answer_headers.get("retry-after"))
                raise
        return status, answer_headers, raw


def build_client(settings: ConnectionSettings, *, max_retries: int = 3) -> OpenSearch:
    """An OpenSearch client for ``settings`` (no request is sent yet)."""
    if settings.api_key is not None:
        raise ConfigError(
            "OpenSearch does not take Elasticsearch API keys (--api-key / ES_API_KEY): "
            "use --username/--password (ES_USERNAME/ES_PASSWORD)"
        )
    kwargs: dict[str, Any] = {
        "hosts": [settings.url],
        "timeout": settings.request_timeout,
        "max_retries": max_retries,
        "retry_on_timeout": max_retries > 0,
        "connection_class": _Connection,
    }
    if settings.auth_kind == "sigv4":
        from indexer.backends._sigv4 import SigV4Signer

        kwargs["http_auth"] = SigV4Signer(settings)
    elif settings.username is not None:
        kwargs["http_auth"] = (settings.username, settings.password.reveal() if settings.password else "")
    if settings.url.startswith("https"):
        kwargs["verify_certs"] = settings.verify
        if settings.ca_cert is not None:
            kwargs["ca_certs"] = str(settings.ca_cert)
        if not settings.verify:
            kwargs["ssl_show_warn"] = False
    return OpenSearch(**kwargs)


def _hybrid_query(lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams) -> dict[str, Any]:
    return {
        "query": {"hybrid": {"queries": [dict(lexical), {"knn": {knn.field: _knn(knn)}}]}},
        "search_pipeline": harness_pipeline(params),
    }


class OpenSearchBackend(RestBackend):
    product: ClassVar[str] = "opensearch"
    display: ClassVar[str] = "OpenSearch"
    FUSIONS: ClassVar[dict[str, FusionBody]] = {"hybrid_query": _hybrid_query}

    def __init__(self, settings: ConnectionSettings, server: EngineInfo | None = None) -> None:
        super().__init__(settings, server)
        self._client = build_client(settings)
        # bulk and msearch: the caller paces retries, the client must not retry behind its back
        self._once = build_client(settings, max_retries=0)

    def close(self) -> None:
        self._client.close()
        self._once.close()

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
        try:
            answer = client.transport.perform_request(
                method,
                path,
                params=dict(params or {}),
                body=body,
                headers=_NDJSON if ndjson_body else _JSON,
                timeout=timeout_s,
            )
        except TransportError as exc:
            raise self._translate(exc, what) from None
        if method == "HEAD":
            if not answer:
                raise NotFound(f"{what}: not found", status=404)
            return None
        return answer

    def _translate(self, exc: TransportError, what: str) -> HarnessError:
        """The one map from opensearch-py's exceptions to ours."""
        if isinstance(exc, SSLError):
            return untrusted(exc.info if isinstance(exc.info, Exception) else exc, url=self.url)
        if isinstance(exc, OSConnectionError):  # ConnectionTimeout is one too
            return unreachable(
                exc, what=what, url=self.url, product=self.display, timeout=isinstance(exc, ConnectionTimeout)
            )
        if isinstance(exc.status_code, int):
            return http_failure(
                exc.status_code,
                exc.info,
                what=what,
                url=self.url,
                product=self.display,
                auth=auth_label(self.settings),
                retry_after_s=retry_after(getattr(exc, _RETRY_AFTER, None)),
            )
        if isinstance(exc, SerializationError):
            return RequestFailed(
                f"{self.display} at {self.url} sent an unreadable answer while {what}: {short(exc)}"
            )
        return RequestFailed(f"{self.display} at {self.url} failed while {what}: {short(exc)}")

    def _index_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(dict(settings))
        if self.probe().has(KNN) and "index.knn" not in out:
            out.setdefault("index", {})["knn"] = True
        return out

    # -- dialects
    def vector_mapping(self, spec: VectorSpec) -> dict[str, Any]:
        engine = spec.engine or "lucene"
        if engine == "nmslib":
            raise ConfigError(
                "k-NN engine 'nmslib' is refused: it is deprecated since OpenSearch 2.19 and refused for new "
                "indices from 3.0; expected lucene or faiss"
            )
        if engine not in KNN_ENGINE_FEATURES:
            raise ConfigError(f"expected the k-NN engine lucene or faiss, found {engine!r}")
        if spec.index_type != "hnsw":
            raise ConfigError(
                f"OpenSearch's k-NN engines offer the index type 'hnsw' here; {spec.index_type!r} is "
                "an Elasticsearch dense_vector type"
            )
        caps = self.probe()
        caps.require(KNN)
        if not caps.has(KNN_ENGINE_FEATURES[engine]):
            raise CapabilityMissing(
                f"{self.url} cannot build a knn_vector field on the {engine} engine: expected the cluster to "
                f"have it, found {caps.missing[KNN_ENGINE_FEATURES[engine]]}; use engine lucene (--knn-engine lucene)"
            )
        return {
            "type": "knn_vector",
            "dimension": spec.dims,
            "method": {
                "name": "hnsw",
                "engine": engine,
                "space_type": SPACE_TYPES[spec.similarity],
                "parameters": {"m": spec.m, "ef_construction": spec.ef_construction},
            },
        }

    def vector_dims(self, field: Mapping[str, Any]) -> int | None:
        return int(field["dimension"]) if field.get("type") == "knn_vector" and "dimension" in field else None

    def knn_search(self, knn: KnnSpec) -> dict[str, Any]:
        self.probe().require(KNN)
        return {"query": {"knn": {knn.field: _knn(knn)}}}

    def bm25_scale(self, k1: float) -> float:
        return 1.0 + k1

    def weighted_sum(
        self,
        lexical: Mapping[str, Any],
        knn: KnnSpec,
        *,
        lexical_weight: float,
        vector_weight: float,
        bm25_k1: float | None = None,
    ) -> dict[str, Any]:
        """``bool.should`` of the boosted lexical query and the boosted ``knn`` clause.

        With ``bm25_k1`` (the k1 of the BM25 field searched) the lexical boost is scaled by ``1 + k1``:
        OpenSearch scores BM25 as Lucene does, without Elasticsearch's ``(k1 + 1)`` factor, so this makes
        the same weights give the same sum on both engines.
        """
        self.probe().require(KNN)
        lexical_boost = lexical_weight * self.bm25_scale(bm25_k1) if bm25_k1 is not None else lexical_weight
        return {
            "query": {
                "bool": {
                    "should": [
                        {"bool": {"must": [dict(lexical)], "boost": lexical_boost}},
                        {"knn": {knn.field: {**_knn(knn), "boost": vector_weight}}},
                    ]
                }
            }
        }

    # -- engine-side fusion and search pipelines
    def fusion_search(
        self, kind: str, lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams
    ) -> dict[str, Any]:
        if kind == "hybrid_query":
            self.probe().require(HYBRID_QUERY)
            require_technique(self.probe(), params.technique)
        return super().fusion_search(kind, lexical, knn, params)

    def search_pipeline(self, name: str) -> dict[str, Any]:
        """The definition of the search pipeline ``name`` (sent inline: msearch takes no pipeline name)."""
        self.probe().require(SEARCH_PIPELINE)
        try:
            found = self._call(
                "GET", f"/_search/pipeline/{quote(name, safe='')}", what=f"reading search pipeline {name}"
            )
        except NotFound:
            found = {}
        if name not in found:
            try:
                known = sorted(self._call("GET", "/_search/pipeline", what="listing search pipelines"))
            except NotFound:
                known = []
            raise ConfigError(
                f"{self.url} has no search pipeline {name!r}: expected one of [{', '.join(known)}] "
                f"(GET /_search/pipeline), found none named {name!r}; create it (PUT /_search/pipeline/{name}) "
                "or correct the arm's search_pipeline"
            )
        definition: dict[str, Any] = found[name]
        return definition

    def put_search_pipeline(self, name: str, body: Mapping[str, Any]) -> None:
        self.probe().require(SEARCH_PIPELINE)
        self._call(
            "PUT",
            f"/_search/pipeline/{quote(name, safe='')}",
            what=f"creating search pipeline {name}",
            body=dict(body),
        )

    def default_search_pipeline(self, index: str) -> str | None:
        """The index's default search pipeline (``index.search.default_pipeline``), None without one."""
        if not self.probe().has(SEARCH_PIPELINE):
            return None
        found = self.get_settings(index).get("index", {}).get("search", {}).get("default_pipeline")
        return None if found in (None, "", "_none") else str(found)

    def _checked(self, result: SearchResult) -> SearchResult:
        if result.error is None and unnormalized(h.score for h in result.hits):
            return SearchResult(hits=(), took_ms=result.took_ms, status=result.status, error=UNNORMALIZED)
        return result

    # -- probe
    def _probe(self) -> Capabilities:
        info, modules = self._local_node()
        features, missing = self._declared(info, modules)
        if features[HYBRID_QUERY] and not self._search_ok(
            {"query": {"hybrid": {"queries": [{"match_all": {}}]}}}, "probing a query type"
        ):
            refused = (
                f"{self.url} refused a hybrid query (asked of no index, read-only): no neural-search there"
            )
            for feature in (HYBRID_QUERY, NORMALIZATION_PROCESSOR, Z_SCORE, RRF_PROCESSOR):
                features[feature] = False
                missing[feature] = refused
        if features[FAISS_ENGINE] and self._local_attribute(FAISS_ATTRIBUTE) == "false":
            features[FAISS_ENGINE] = False
            missing[FAISS_ENGINE] = (
                f"the k-NN plugin of OpenSearch {info.version} at {self.url} has no native libraries (node attribute "
                f"{FAISS_ATTRIBUTE}: false; the Maven k-NN zip ships none), so faiss cannot run there"
            )
        settle_knn(features, missing)
        analyzers = self._analyzers()
        plugins = [m for m in (modules or ()) if m.startswith("opensearch-")]
        return Capabilities(
            version=info.version,
            flavour=self.product,
            build_flavour=info.build_flavour,
            modules=modules or (),
            analyzers=analyzers,
            retrievers={"rrf": False, "linear": False},  # retrievers are Elasticsearch's
            license="apache-2.0",
            vector_index_types=("hnsw",) if features[KNN] else (),
            nodes=self.health().nodes,
            notes=self._notes(info, plugins, analyzers, features, missing),
            features=features,
            missing=missing,
            serverless=info.serverless,
        )

    def _local_attribute(self, name: str) -> str | None:
        if self.serverless:
            return None
        local = next(iter(self._nodes_info().values()))
        value = (local.get("attributes") or {}).get(name)
        return None if value is None else str(value).lower()

    def _notes(
        self,
        info: EngineInfo,
        plugins: list[str],
        analyzers: Mapping[str, bool],
        features: Mapping[str, bool],
        missing: Mapping[str, str],
    ) -> tuple[str, ...]:
        if info.serverless:
            return (self._serverless_note(),)
        notes = []
        if SECURITY_PLUGIN not in plugins:
            notes.append(
                "no security plugin (opensearch-security): no TLS, no users, no access control on this cluster"
            )
        if not features[KNN]:
            notes.append(missing[KNN])
        if not analyzers["english"]:
            notes.append(
                "no 'english' analyzer (analysis-common missing): the index falls back to hunspell or standard+stop"
            )
        if version_tuple(info.version) < (3,):
            lacking = [
                text
                for text, ok in (
                    (f"the k-NN plugin ({KNN_PLUGIN})", KNN_PLUGIN in plugins),
                    ("the 'english' analyzer (analysis-common)", analyzers["english"]),
                    ("search templates (lang-mustache)", features[SEARCH_TEMPLATE]),
                )
                if not ok
            ]
            notes.append(
                f"OpenSearch {info.version} is 2.x (the harness is tested on {TESTED_VERSION}): "
                + (
                    f"this cluster lacks {', '.join(lacking)}"
                    if lacking
                    else "nothing the harness needs is missing"
                )
            )
        return tuple(notes)


def _knn(knn: KnnSpec) -> dict[str, Any]:
    return {"vector": list(knn.vector), "k": knn.k, "method_parameters": {"ef_search": knn.num_candidates}}
