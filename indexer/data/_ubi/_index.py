"""UBI logs in a cluster's ``ubi_queries`` and ``ubi_events`` indices, read and written through a Backend.

Reading scans both indices (a scroll, :meth:`Backend.scan`); the event filter runs in the engine
and again on what comes back, so files and indices give the same log. Writing creates the two
indices with the mappings below when they are missing (on either engine: keyword ids, a date,
an integer rank, as the UBI plugin maps the fields read here) and bulk-indexes the rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from base import ConfigError, IndexingError
from indexer.backends import Backend
from indexer.backends._rest import ndjson
from indexer.data._ubi._model import (
    EVENTS_INDEX,
    QUERIES_INDEX,
    EventFilter,
    UbiEvent,
    UbiLog,
    UbiQuery,
    one_based,
    skipped_note,
)
from indexer.data._ubi._parse import Place, has_text, parse_event, parse_query
from indexer.data._validate import Problems

_KEYWORD = {"type": "keyword"}
_DATE = {"type": "date", "format": "strict_date_optional_time||epoch_millis"}
QUERIES_MAPPING: dict[str, Any] = {
    "dynamic": False,
    "properties": {
        "query_id": _KEYWORD,
        "user_query": _KEYWORD,
        "timestamp": _DATE,
        "query_response_id": _KEYWORD,
        "query_response_hit_ids": _KEYWORD,
        "client_id": _KEYWORD,
        "application": _KEYWORD,
    },
}
EVENTS_MAPPING: dict[str, Any] = {
    "properties": {
        "action_name": _KEYWORD,
        "query_id": _KEYWORD,
        "user_query": _KEYWORD,
        "client_id": _KEYWORD,
        "application": _KEYWORD,
        "message_type": _KEYWORD,
        "timestamp": _DATE,
        "event_attributes": {
            "properties": {
                "object": {"properties": {"object_id": _KEYWORD, "object_id_field": _KEYWORD}},
                "position": {"properties": {"ordinal": {"type": "integer"}}},
            }
        },
    }
}
_EVENT_FIELDS = ("action_name", "query_id", "user_query", "client_id", "timestamp", "event_attributes")
_QUERY_FIELDS = ("query_id", "user_query", "timestamp", "query_response_hit_ids", "client_id")
BULK_CHUNK = 2000


def _scan_events(backend: Backend, index: str, keep: EventFilter, problems: Problems) -> Iterator[UbiEvent]:
    for hit in backend.scan(index, keep.query(), fields=_EVENT_FIELDS, page_size=BULK_CHUNK):
        event = parse_event(dict(hit.source or {}), Place(index, None, hit.id), problems)
        if event is not None and keep.keep(event):
            yield event


def _scan_queries(backend: Backend, index: str, problems: Problems, skipped: list[str]) -> Iterator[UbiQuery]:
    for hit in backend.scan(index, fields=_QUERY_FIELDS, page_size=BULK_CHUNK):
        if not has_text(dict(hit.source or {})):
            skipped.append(hit.id)
            continue
        query = parse_query(dict(hit.source or {}), Place(index, None, hit.id), problems)
        if query is not None:
            yield query


def read_ubi_index(
    backend: Backend,
    *,
    events_index: str = EVENTS_INDEX,
    queries_index: str | None = QUERIES_INDEX,
    keep: EventFilter | None = None,
) -> UbiLog:
    """The log in a cluster's UBI indices (``queries_index`` None, or missing: events only, which must then
    carry ``user_query``); ``keep`` filters the events in the engine. Every unreadable document is a
    problem, reported together (a DataError)."""
    if not backend.index_exists(events_index):
        raise ConfigError(f"expected the UBI events index {events_index} on {backend.url}, found none")
    problems = Problems()
    events, ranks = one_based(tuple(_scan_events(backend, events_index, keep or EventFilter(), problems)))
    searches = queries_index if queries_index and backend.index_exists(queries_index) else None
    skipped: list[str] = []
    queries = tuple(_scan_queries(backend, searches, problems, skipped)) if searches else ()
    where = f"{backend.url} {events_index}" + (
        f" and {searches}" if searches else f" (no {queries_index} index)" if queries_index else ""
    )
    problems.raise_if_errors(f"UBI log in {where}")
    notes = tuple(n for n in (ranks, skipped_note(len(skipped))) if n)
    return UbiLog(queries, events, source=where, skipped_searches=len(skipped), notes=notes)


def _bulk(backend: Backend, index: str, rows: Sequence[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BULK_CHUNK):
        chunk = rows[start : start + BULK_CHUNK]
        payload = ndjson(line for row in chunk for line in ({"index": {"_index": index}}, row))
        failed = backend.bulk(payload, timeout_s=120).failed
        if failed:
            first = failed[0]
            raise IndexingError(
                f"{index}: expected every UBI row indexed, found {len(failed)} refused "
                f"(first: {first.error_type}: {first.reason})"
            )


def index_ubi(
    backend: Backend,
    log: UbiLog,
    *,
    events_index: str = EVENTS_INDEX,
    queries_index: str = QUERIES_INDEX,
) -> tuple[int, int]:
    """Index ``log``'s rows into the two indices (created with the UBI mappings when missing), refreshed
    after; the numbers of searches and events written."""
    for name, mapping in ((queries_index, QUERIES_MAPPING), (events_index, EVENTS_MAPPING)):
        if not backend.index_exists(name):
            backend.create_index(name, settings={"number_of_replicas": 0}, mappings=mapping)
    _bulk(backend, queries_index, [q.to_source() for q in log.queries])
    _bulk(backend, events_index, [e.to_source() for e in log.events])
    for name in (queries_index, events_index):
        backend.refresh(name)
    return len(log.queries), len(log.events)
