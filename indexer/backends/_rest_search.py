"""Documents and searches: bulk, count, search, msearch, scroll, _rank_eval, stored templates, mget."""

from __future__ import annotations

import contextlib
import json
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from base import RequestFailed
from indexer.backends._errors import error_parts
from indexer.backends._transport import RestTransport, ndjson, query_params, segment
from indexer.backends._types import (
    RANK_EVAL,
    SEARCH_TEMPLATE,
    BulkItem,
    BulkResult,
    Hit,
    RankEvalResult,
    RatedRequest,
    SearchResult,
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


class Searching(RestTransport):
    """What the harness sends to search and to fill indices."""

    @abstractmethod
    def _physical(self, index: str) -> str:
        """The index an index name or alias resolves to."""

    def _checked(self, result: SearchResult) -> SearchResult:
        """One search's result as the harness may score it (a backend refuses answers that are no ranking)."""
        return result

    def bulk(self, payload: bytes, *, timeout_s: float | None = None) -> BulkResult:
        body = self._call(
            "POST",
            "/_bulk",
            what="sending a bulk request",
            params=query_params(filter_path=BULK_FILTER),
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
        answer = self._call(
            "POST", f"/{segment(index)}/_count", what=f"counting documents in {index}", body=body
        )
        return int(answer["count"])

    def search(
        self, index: str, body: Mapping[str, Any] | bytes, *, timeout_s: float | None = None
    ) -> SearchResult:
        """One search; with ``timeout_s`` it is sent once (no client retry) and given up after that long,
        as a load generator needs: a retried request would hide an error and stretch its service time.
        ``body`` may be JSON already encoded (bytes): it is sent as it is."""
        answer = self._call(
            "POST",
            f"/{segment(index)}/_search",
            what=f"searching {index}",
            params=query_params(allow_partial_search_results=False),
            body=body if isinstance(body, bytes) else dict(body),
            timeout_s=timeout_s,
            once=timeout_s is not None,
        )
        return self._checked(_result(answer))

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
            params=query_params(
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
        return [self._checked(_result(r)) for r in responses]

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
            f"/{segment(index)}/_search",
            what=f"scanning {index}",
            params=query_params(scroll=SCROLL_KEEP_ALIVE),
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
        physical = self._physical(index)
        body = {
            "requests": [_rated(physical, r) for r in requests],
            "metric": dict(metric),
        }
        answer = self._call(
            "POST", f"/{segment(index)}/_rank_eval", what=f"running _rank_eval on {index}", body=body
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
            f"/_scripts/{segment(template_id)}",
            what=f"storing search template {template_id}",
            body={"script": {"lang": "mustache", "source": source}},
        )

    def get_sources(self, index: str, ids: Sequence[str], fields: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        answer = self._call(
            "POST",
            f"/{segment(index)}/_mget",
            what=f"fetching {len(ids)} documents from {index}",
            params=query_params(_source_includes=list(fields)),
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
