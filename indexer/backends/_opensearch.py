"""The OpenSearch backend: opensearch-py as the transport, OpenSearch's dialects and probe.

Mapping dialect: ``knn_vector`` with ``dimension`` and a ``method``
``{name: hnsw, engine: lucene, space_type, parameters: {m, ef_construction}}``;
new indices get ``index.knn: true`` (a static setting, so vector fields can be
added later). Only the ``lucene`` engine is used: the k-NN plugin's faiss and
nmslib engines need native libraries (the integ-test build has none, and a field
on them crashes its JVM).

Similarity: Elasticsearch's ``dot_product`` requires unit vectors and scores
``(1 + dot) / 2``; on unit vectors that is exactly Lucene's cosine score, which
OpenSearch's ``cosinesimil`` gives (``innerproduct`` would score ``1 + dot``,
another scale). So ``dot_product`` maps to ``cosinesimil``, and the same
document gets the same kNN score on both engines: an in-engine weighted sum means
the same thing on either.

Query dialect: kNN is a ``knn`` query clause (``k``, and ``method_parameters.ef_search``
for Elasticsearch's ``num_candidates``); the in-engine weighted sum is a
``bool.should`` of the boosted lexical query and the boosted ``knn`` clause.

Engine-side fusion: the neural-search plugin's ``hybrid`` query, normalised and
combined by a ``normalization-processor`` (min-max, weighted arithmetic mean) in a
temporary search pipeline sent with the request; only where the probe finds the
plugin (the integ-test build has none).

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

from base import ConfigError, HarnessError, NotFound, RequestFailed
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

KNN_PLUGIN = "opensearch-knn"
NEURAL_PLUGIN = "opensearch-neural-search"
SECURITY_PLUGIN = "opensearch-security"
PROBE_PATTERN = "r2med-capability-probe-no-such-index*"
#: Elasticsearch similarity -> OpenSearch space_type (see the module docstring for dot_product)
SPACE_TYPES: dict[str, str] = {
    "dot_product": "cosinesimil",
    "cosine": "cosinesimil",
    "l2_norm": "l2",
    "max_inner_product": "innerproduct",
}
#: k-NN engines that need native libraries: refused, with the reason
NATIVE_ENGINES = frozenset({"faiss", "nmslib"})
#: the knn query takes method_parameters (ef_search) from this version on
KNN_EF_SEARCH_SINCE = (2, 16)
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
    if settings.username is not None:
        kwargs["http_auth"] = (settings.username, settings.password.reveal() if settings.password else "")
    if settings.url.startswith("https"):
        kwargs["verify_certs"] = settings.verify
        if settings.ca_cert is not None:
            kwargs["ca_certs"] = str(settings.ca_cert)
        if not settings.verify:
            kwargs["ssl_show_warn"] = False
    return OpenSearch(**kwargs)


def _hybrid_query(lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams) -> dict[str, Any]:
    total = sum(params.weights)
    return {
        "query": {"hybrid": {"queries": [dict(lexical), {"knn": {knn.field: _knn(knn)}}]}},
        "search_pipeline": {
            "phase_results_processors": [
                {
                    "normalization-processor": {
                        "normalization": {"technique": "min_max"},
                        "combination": {
                            "technique": "arithmetic_mean",
                            "parameters": {"weights": [w / total for w in params.weights]},
                        },
                    }
                }
            ]
        },
    }


class OpenSearchBackend(RestBackend):
    product: ClassVar[str] = "opensearch"
    display: ClassVar[str] = "OpenSearch"
    FUSIONS: ClassVar[dict[str, FusionBody]] = {"hybrid_query": _hybrid_query}

    def __init__(self, settings: ConnectionSettings) -> None:
        super().__init__(settings)
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
        if engine in NATIVE_ENGINES:
            raise ConfigError(
                f"k-NN engine {engine!r} is refused: OpenSearch's {engine} engine needs the k-NN plugin's native "
                "libraries, which the integ-test build lacks (a knn_vector field on faiss or nmslib crashes its "
                "JVM); the harness uses engine 'lucene', the same Lucene HNSW that Elasticsearch uses"
            )
        if engine != "lucene":
            raise ConfigError(f"expected the k-NN engine 'lucene', found {engine!r}")
        if spec.index_type != "hnsw":
            raise ConfigError(
                f"OpenSearch's lucene engine offers the index type 'hnsw' only; {spec.index_type!r} is "
                "an Elasticsearch dense_vector type"
            )
        self.probe().require(KNN)
        return {
            "type": "knn_vector",
            "dimension": spec.dims,
            "method": {
                "name": "hnsw",
                "engine": "lucene",
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

    # -- probe
    def _probe(self) -> Capabilities:
        local = next(iter(self._nodes_info("plugins").values()))
        version = str(local.get("version", "0"))
        module_names = sorted(m["name"] for m in local.get("modules", []))
        plugin_names = sorted(p["name"] for p in local.get("plugins", []))
        vt = version_tuple(version)
        features = {
            KNN: KNN_PLUGIN in plugin_names and vt >= KNN_EF_SEARCH_SINCE,
            HYBRID_QUERY: NEURAL_PLUGIN in plugin_names
            and self._query_ok({"hybrid": {"queries": [{"match_all": {}}]}}),
            SEARCH_TEMPLATE: "lang-mustache" in module_names,
            RRF_RETRIEVER: False,
            LINEAR_RETRIEVER: False,
            RANK_EVAL: "rank-eval" in module_names,
        }
        analyzers = self._analyzers()
        return Capabilities(
            version=version,
            flavour=self.product,
            build_flavour=str(local.get("build_type", "unknown")),
            modules=tuple(module_names + plugin_names),
            analyzers=analyzers,
            retrievers={"rrf": False, "linear": False},  # retrievers are Elasticsearch's
            license="apache-2.0",
            vector_index_types=("hnsw",) if features[KNN] else (),
            nodes=self.health().nodes,
            notes=_notes(version, plugin_names, analyzers, features),
            features=features,
            missing={k: v for k, v in _missing(version, plugin_names).items() if not features[k]},
        )

    def _query_ok(self, query: dict[str, Any]) -> bool:
        try:
            self._call(
                "POST",
                f"/{PROBE_PATTERN}/_search",
                what="probing a query type",
                params={"allow_no_indices": "true"},
                body={"query": query, "size": 1},
            )
        except RequestFailed:
            return False
        return True


def _knn(knn: KnnSpec) -> dict[str, Any]:
    return {"vector": list(knn.vector), "k": knn.k, "method_parameters": {"ef_search": knn.num_candidates}}


def _missing(version: str, plugins: list[str]) -> dict[str, str]:
    if KNN_PLUGIN in plugins:  # present, but too old for the knn query the harness sends
        knn = (
            f"OpenSearch {version} has the k-NN plugin, but its knn query takes method_parameters "
            f"(ef_search, the harness's num_candidates) only from {'.'.join(map(str, KNN_EF_SEARCH_SINCE))}: "
            f"upgrade (tested: {TESTED_VERSION})"
        )
    else:
        knn = (
            f"the cluster has no k-NN plugin ({KNN_PLUGIN}): vector and hybrid arms cannot run, lexical arms "
            f"still can. Install {KNN_PLUGIN} {version}.0 on every node, or run a local node with "
            "`harness engine start --engine opensearch`"
        )
    return {
        KNN: knn,
        HYBRID_QUERY: f"the cluster has no neural-search plugin ({NEURAL_PLUGIN}): the `hybrid` query arm is "
        "skipped (the in-engine weighted sum, a bool query, still runs)",
        SEARCH_TEMPLATE: "the cluster has no lang-mustache module: search templates cannot run",
        RRF_RETRIEVER: "retrievers are Elasticsearch's: OpenSearch has no 'rrf' retriever (its engine-side "
        "fusion is the neural-search `hybrid` query)",
        LINEAR_RETRIEVER: "retrievers are Elasticsearch's: OpenSearch has no 'linear' retriever (its engine-side "
        "fusion is the neural-search `hybrid` query)",
        RANK_EVAL: f"OpenSearch {version} has no rank-eval module: the engine cannot score rated searches "
        "(_rank_eval)",
    }


def _notes(
    version: str, plugins: list[str], analyzers: dict[str, bool], features: dict[str, bool]
) -> tuple[str, ...]:
    notes = []
    if SECURITY_PLUGIN not in plugins:
        notes.append(
            "no security plugin (opensearch-security): no TLS, no users, no access control on this cluster"
        )
    if not features[KNN]:
        notes.append(_missing(version, plugins)[KNN])
    if not analyzers["english"]:
        notes.append(
            "no 'english' analyzer (analysis-common missing): the index falls back to hunspell or standard+stop"
        )
    if version_tuple(version) < (3,):
        lacking = [
            name
            for name, ok in (
                (f"the k-NN plugin ({KNN_PLUGIN})", features[KNN]),
                ("the 'english' analyzer (analysis-common)", analyzers["english"]),
                ("search templates (lang-mustache)", features[SEARCH_TEMPLATE]),
            )
            if not ok
        ]
        notes.append(
            f"OpenSearch {version} is 2.x (the harness is tested on {TESTED_VERSION}): "
            + (
                f"this cluster lacks {', '.join(lacking)}"
                if lacking
                else "nothing the harness needs is missing"
            )
        )
    return tuple(notes)
