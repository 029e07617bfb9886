"""The REST calls both engines answer the same way, written once over a per-backend transport.

A backend subclass supplies ``_call`` (one request through its own client, its
exceptions translated to ours), the dialects and the product-specific probe
steps; everything else (index administration, aliases, templates, bulk, count,
search, msearch) is the same REST API on Elasticsearch and OpenSearch and is
written here, with typed answers.
"""

from __future__ import annotations

import contextlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Protocol
from urllib.parse import quote

from base import CapabilityMissing, ConfigError, MappingConflictError, NotFound, RequestFailed
from indexer._connection import ConnectionSettings
from indexer.backends._errors import error_parts
from indexer.backends._types import (
    FUSION_KINDS,
    RANK_EVAL,
    SEARCH_TEMPLATE,
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

#: how long the engine keeps a scan's scroll context between two pages
SCROLL_KEEP_ALIVE = "2m"
#: only what a ranking needs comes back from msearch: less JSON to send, parse and hold
MSEARCH_FILTER = (
    "responses.took",
    "responses.status",
    "responses.error",
    "responses.hits.hits._id",
    "responses.hits.hits._score",
)
BULK_FILTER = (
    "took",
    "errors",
    "items.*._id",
    "items.*.status",
    "items.*.error.type",
    "items.*.error.reason",
)
_MAPPING_ERRORS = frozenset({"illegal_argument_exception", "mapper_parsing_exception", "mapper_exception"})


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def ndjson(lines: Iterable[Any]) -> bytes:
    return b"".join(dumps(line) + b"\n" for line in lines)


def _p(name: str) -> str:
    """A path segment: index names, aliases and patterns (commas and wildcards kept)."""
    return quote(name, safe=",*")


def _params(**values: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            out[key] = ",".join(str(v) for v in value)
        else:
            out[key] = str(value)
    return out


class FusionBody(Protocol):
    """Builds the search body of one engine-side fusion kind."""

    def __call__(self, lexical: Mapping[str, Any], knn: KnnSpec, params: FusionParams) -> dict[str, Any]: ...


class RestBackend(ABC):
    """Shared REST logic; subclasses are the Elasticsearch and OpenSearch backends."""

    product: ClassVar[str]
    display: ClassVar[str]
    #: engine-side fusion kind -> its body builder (each backend registers the kinds its engine has)
    FUSIONS: ClassVar[dict[str, FusionBody]] = {}

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self._caps: Capabilities | None = None

    @property
    def url(self) -> str:
        return self.settings.url

    # -- the transport (one per backend)
    @abstractmethod
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
        """One request; the parsed JSON answer. ``once``: no client-side retries. Raises our exceptions."""

    @abstractmethod
    def close(self) -> None: ...

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

    def _index_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Settings for a new index in this engine's dialect (OpenSearch turns k-NN on)."""
        return dict(settings)

    # -- the cluster
    def info(self) -> EngineInfo:
        nodes = self._nodes_info()
        local = next(iter(nodes.values()))
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
        path = "/_cluster/health" + (f"/{_p(index)}" if index else "")
        params = _params(wait_for_status=wait_for_status, timeout=f"{int(timeout_s)}s")
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

    # -- index and template administration
    def index_exists(self, name: str) -> bool:
        try:
            self._call("HEAD", f"/{_p(name)}", what=f"checking whether index {name} exists")
        except NotFound:
            return False
        return True

    def create_index(self, name: str, *, settings: Mapping[str, Any], mappings: Mapping[str, Any]) -> None:
        body = {"settings": self._index_settings(settings), "mappings": dict(mappings)}
        try:
            self._call("PUT", f"/{_p(name)}", what=f"creating index {name}", body=body)
        except RequestFailed as exc:
            if exc.status == 400 and exc.error_type in _MAPPING_ERRORS:
                raise MappingConflictError(
                    f"{self.display} refused the mapping of new index {name}: {exc}"
                ) from None
            raise

    def delete_index(self, name: str, *, missing_ok: bool = False) -> bool:
        try:
            self._call("DELETE", f"/{_p(name)}", what=f"deleting index {name}")
        except NotFound:
            if missing_ok:
                return False
            raise
        return True

    def get_mapping(self, name: str) -> IndexMapping:
        body = self._call("GET", f"/{_p(name)}/_mapping", what=f"reading the mapping of {name}")
        if len(body) != 1:
            raise RequestFailed(f"expected {name} to name one index, found {len(body)}: {sorted(body)}")
        index, data = next(iter(body.items()))
        mappings = data.get("mappings", {})
        dynamic = mappings.get("dynamic")
        return IndexMapping(
            index=index,
            properties=mappings.get("properties", {}),
            meta=mappings.get("_meta", {}),
            dynamic=None if dynamic is None else str(dynamic).lower(),
        )

    def put_mapping(
        self,
        name: str,
        *,
        properties: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        body: dict[str, Any] = {}
        if properties is not None:
            body["properties"] = dict(properties)
        if meta is not None:
            body["_meta"] = dict(meta)
        try:
            self._call("PUT", f"/{_p(name)}/_mapping", what=f"updating the mapping of {name}", body=body)
        except RequestFailed as exc:
            if exc.status == 400 and exc.error_type in _MAPPING_ERRORS:
                raise _mapping_conflict(name, properties or {}, exc) from None
            raise

    def put_settings(self, name: str, settings: Mapping[str, Any]) -> None:
        self._call(
            "PUT", f"/{_p(name)}/_settings", what=f"updating the settings of {name}", body=dict(settings)
        )

    def get_settings(self, name: str) -> dict[str, Any]:
        body = self._call("GET", f"/{_p(name)}/_settings", what=f"reading the settings of {name}")
        if len(body) != 1:
            raise RequestFailed(f"expected {name} to name one index, found {len(body)}: {sorted(body)}")
        settings: dict[str, Any] = next(iter(body.values())).get("settings", {})
        return settings

    def refresh(self, name: str) -> None:
        self._call("POST", f"/{_p(name)}/_refresh", what=f"refreshing {name}")

    def replaced_docs_releasable(self, name: str) -> bool:
        """Whether every shard's retention leases have moved past its last operation (flushing first): only
        then can a merge drop the documents that updates replaced (soft deletes are kept for recovery until
        the leases move, which the engine does every 30 s)."""
        self._call("POST", f"/{_p(name)}/_flush", what=f"flushing {name}")
        stats = self._call(
            "GET",
            f"/{_p(name)}/_stats/docs",
            what=f"reading the shard stats of {name}",
            params=_params(level="shards"),
        )
        for copies in stats["indices"][name]["shards"].values():
            for shard in copies:
                leases = shard.get("retention_leases", {}).get("leases", [])
                top = shard.get("seq_no", {}).get("max_seq_no", -1)
                if any(int(lease["retaining_seq_no"]) <= top for lease in leases):
                    return False
        return True

    def force_merge(
        self,
        name: str,
        *,
        max_segments: int | None = 1,
        timeout_s: float = 600.0,
        expunge_deletes: bool = False,
    ) -> None:
        """Merge ``name`` down to ``max_segments`` segments, or (``expunge_deletes``) merge away the
        segments that hold deleted documents; waits for the merge."""
        params = (
            _params(only_expunge_deletes=True) if expunge_deletes else _params(max_num_segments=max_segments)
        )
        self._call(
            "POST",
            f"/{_p(name)}/_forcemerge",
            what=f"force-merging {name}",
            params=params,
            timeout_s=timeout_s,
        )

    def list_indices(self, pattern: str) -> list[IndexStats]:
        rows = self._call(
            "GET",
            f"/_cat/indices/{_p(pattern)}",
            what=f"listing indices {pattern}",
            params=_params(
                format="json",
                bytes="b",
                expand_wildcards="open",
                h="index,health,docs.count,docs.deleted,store.size",
            ),
        )
        if not rows:
            return []
        aliases = self._call("GET", f"/{_p(pattern)}/_alias", what=f"reading the aliases of {pattern}")
        return [
            IndexStats(
                name=row["index"],
                docs=int(row.get("docs.count") or 0),
                size_bytes=int(row.get("store.size") or 0),
                health=str(row.get("health") or "unknown"),
                aliases=tuple(sorted(aliases.get(row["index"], {}).get("aliases", {}))),
                deleted=int(row.get("docs.deleted") or 0),
            )
            for row in sorted(rows, key=lambda r: str(r["index"]))
        ]

    def alias_targets(self, alias: str) -> list[str]:
        try:
            body = self._call("GET", f"/_alias/{_p(alias)}", what=f"reading alias {alias}")
        except NotFound:
            return []
        return sorted(body)

    def point_alias(self, alias: str, index: str) -> None:
        """Point ``alias`` at ``index`` alone, in one atomic request."""
        actions: list[dict[str, Any]] = [
            {"remove": {"index": old, "alias": alias}} for old in self.alias_targets(alias) if old != index
        ]
        actions.append({"add": {"index": index, "alias": alias}})
        self._call("POST", "/_aliases", what=f"pointing alias {alias} at {index}", body={"actions": actions})

    def put_index_template(self, name: str, body: Mapping[str, Any]) -> None:
        self._call(
            "PUT", f"/_index_template/{_p(name)}", what=f"installing index template {name}", body=dict(body)
        )

    def delete_index_template(self, name: str, *, missing_ok: bool = False) -> bool:
        try:
            self._call("DELETE", f"/_index_template/{_p(name)}", what=f"deleting index template {name}")
        except NotFound:
            if missing_ok:
                return False
            raise
        return True

    # -- documents and searches
    def bulk(self, payload: bytes, *, timeout_s: float | None = None) -> BulkResult:
        body = self._call(
            "POST",
            "/_bulk",
            what="sending a bulk request",
            params=_params(filter_path=BULK_FILTER),
            body=payload,
            ndjson_body=True,
            timeout_s=timeout_s,
            once=True,
        )
        items = []
        for entry in body.get("items", []):
            ((op, info),) = entry.items()
            err = info.get("error")
            items.append(
                BulkItem(
                    op=op,
                    doc_id=str(info.get("_id")),
                    status=int(info.get("status", 500)),
                    error_type=err.get("type") if isinstance(err, dict) else None,
                    reason=err.get("reason") if isinstance(err, dict) else (str(err) if err else None),
                )
            )
        return BulkResult(items=tuple(items), took_ms=float(body.get("took", 0)))

    def count(self, index: str, query: Mapping[str, Any] | None = None) -> int:
        body = {"query": dict(query)} if query is not None else None
        answer = self._call("POST", f"/{_p(index)}/_count", what=f"counting documents in {index}", body=body)
        return int(answer["count"])

    def search(
        self, index: str, body: Mapping[str, Any] | bytes, *, timeout_s: float | None = None
    ) -> SearchResult:
        """One search; with ``timeout_s`` it is sent once (no client retry) and given up after that long,
        as a load generator needs: a retried request would hide an error and stretch its service time.
        ``body`` may be JSON already encoded (bytes): it is sent as it is."""
        answer = self._call(
            "POST",
            f"/{_p(index)}/_search",
            what=f"searching {index}",
            params=_params(allow_partial_search_results=False),
            body=body if isinstance(body, bytes) else dict(body),
            timeout_s=timeout_s,
            once=timeout_s is not None,
        )
        return _result(answer)

    def msearch(
        self,
        index: str,
        bodies: Sequence[Mapping[str, Any]],
        *,
        timeout_s: float | None = None,
        source_fields: Sequence[str] = (),
        stored_templates: bool = False,
    ) -> list[SearchResult]:
        # a search that lost shards is an error, never a ranking over part of the index (both engines
        # answer 200 with fewer hits otherwise, and the run would score them as if they were whole)
        header: dict[str, Any] = {"index": index, "allow_partial_search_results": False}
        if stored_templates:  # bodies are {"id": ..., "params": {...}}, rendered by the engine
            self.probe().require(SEARCH_TEMPLATE)
            header = {"index": index}
        payload = ndjson(line for body in bodies for line in (header, body))
        answer = self._call(
            "POST",
            "/_msearch/template" if stored_templates else "/_msearch",
            what=f"running {len(bodies)} searches on {index}",
            params=_params(
                filter_path=MSEARCH_FILTER + tuple(f"responses.hits.hits._source.{f}" for f in source_fields)
            ),
            body=payload,
            ndjson_body=True,
            timeout_s=timeout_s,
            once=True,
        )
        responses = answer.get("responses", [])
        if len(responses) != len(bodies):
            raise RequestFailed(
                f"msearch on {index} answered {len(responses)} responses for {len(bodies)} searches"
            )
        return [_result(r) for r in responses]

    def scan(
        self,
        index: str,
        query: Mapping[str, Any] | None = None,
        *,
        fields: Sequence[str] = (),
        page_size: int = 1000,
    ) -> Iterator[Hit]:
        """Every document of ``index`` matching ``query`` (all by default), page by page through a scroll
        (the same API on both engines), in no particular order; ``fields``: the ``_source`` fields to
        fetch (all when empty). The scroll is cleared when the iteration ends or is abandoned."""
        body: dict[str, Any] = {
            "size": page_size,
            "sort": ["_doc"],
            "query": dict(query or {"match_all": {}}),
        }
        if fields:
            body["_source"] = list(fields)
        answer = self._call(
            "POST",
            f"/{_p(index)}/_search",
            what=f"scanning {index}",
            params=_params(scroll=SCROLL_KEEP_ALIVE),
            body=body,
        )
        scroll_id = answer.get("_scroll_id")
        try:
            while hits := _result(answer).hits:
                yield from hits
                answer = self._call(
                    "POST",
                    "/_search/scroll",
                    what=f"scanning {index} (next page)",
                    body={"scroll": SCROLL_KEEP_ALIVE, "scroll_id": scroll_id},
                )
                scroll_id = answer.get("_scroll_id", scroll_id)
        finally:
            self._clear_scroll(scroll_id)

    def _clear_scroll(self, scroll_id: str | None) -> None:
        if scroll_id is None:
            return
        with contextlib.suppress(RequestFailed):  # expired already (NotFound): the engine drops it on its own
            self._call("DELETE", "/_search/scroll", what="clearing a scroll", body={"scroll_id": [scroll_id]})

    def rank_eval(
        self, index: str, requests: Sequence[RatedRequest], metric: Mapping[str, Any]
    ) -> RankEvalResult:
        """The engine's own scores of rated searches (``_rank_eval``; the rank-eval module, which the probe
        reports as ``rank_eval``). ``metric`` is the engine's metric object, e.g.
        ``{"dcg": {"k": 10, "normalize": True}}``; ``index`` must name one index (an alias is resolved)."""
        self.probe().require(RANK_EVAL)
        physical = self.get_mapping(index).index
        body = {
            "requests": [_rated(physical, r) for r in requests],
            "metric": dict(metric),
        }
        answer = self._call(
            "POST", f"/{_p(index)}/_rank_eval", what=f"running _rank_eval on {index}", body=body
        )
        details = answer.get("details", {})
        return RankEvalResult(
            metric_score=float(answer.get("metric_score", 0.0)),
            per_query={rid: float(d.get("metric_score", 0.0)) for rid, d in details.items()},
            hits={rid: tuple(str(h["hit"]["_id"]) for h in d.get("hits", [])) for rid, d in details.items()},
            failures={rid: json.dumps(f)[:300] for rid, f in (answer.get("failures") or {}).items()},
        )

    def put_stored_template(self, template_id: str, source: str) -> None:
        """Store a mustache search template (``PUT _scripts/<id>``); it needs lang-mustache."""
        self.probe().require(SEARCH_TEMPLATE)
        self._call(
            "PUT",
            f"/_scripts/{_p(template_id)}",
            what=f"storing search template {template_id}",
            body={"script": {"lang": "mustache", "source": source}},
        )

    def get_sources(self, index: str, ids: Sequence[str], fields: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        answer = self._call(
            "POST",
            f"/{_p(index)}/_mget",
            what=f"fetching {len(ids)} documents from {index}",
            params=_params(_source_includes=list(fields)),
            body={"ids": list(ids)},
        )
        return {d["_id"]: d.get("_source", {}) for d in answer.get("docs", []) if d.get("found")}


def _result(answer: Mapping[str, Any]) -> SearchResult:
    if "error" in answer:
        etype, reason = error_parts(answer)
        return SearchResult(
            hits=(),
            took_ms=float(answer.get("took", 0)),
            status=int(answer.get("status", 500)),
            error=f"{etype}: {reason}" if etype else reason,
        )
    hits = tuple(
        Hit(
            id=str(h["_id"]),
            score=float(h["_score"]) if h.get("_score") is not None else None,
            source=h.get("_source"),
            sort=tuple(h["sort"]) if "sort" in h else None,
        )
        for h in answer.get("hits", {}).get("hits", [])  # filter_path drops empty hit lists
    )
    return SearchResult(
        hits=hits, took_ms=float(answer.get("took", 0)), status=int(answer.get("status", 200))
    )


def _rated(index: str, request: RatedRequest) -> dict[str, Any]:
    return {
        "id": request.id,
        "request": {"query": dict(request.query)},
        "ratings": [{"_index": index, "_id": d, "rating": int(g)} for d, g in request.ratings.items()],
    }


def _mapping_conflict(index: str, properties: Mapping[str, Any], exc: RequestFailed) -> MappingConflictError:
    """Name the field(s) the engine complains about (it names them in brackets), and both sides if we can."""
    text = str(exc)
    named = [f for f in properties if re.search(rf"\[{re.escape(f)}\]", text)]
    fields = ", ".join(named or list(properties)) or "(meta only)"
    return MappingConflictError(
        f"mapping conflict on index {index}, field {fields}: the existing mapping cannot take the new one "
        f"(nothing was changed). Delete the index (`harness indices delete`) or keep the existing layout. "
        f"The engine said: {text}"
    )
