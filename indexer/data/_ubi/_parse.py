"""One UBI row (a JSON object from a file line or an index document) into a typed search or event.

Problems name where the row came from (``file:line``, or ``index`` and the document id) and what
was expected. A row exported with its envelope (``{"_index": ..., "_source": {...}}``, as dump
tools write it) is read from its ``_source``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from indexer.data._ubi._model import CLICK, IMPRESSION, UbiEvent, UbiQuery, parse_timestamp
from indexer.data._validate import Problems

#: the actions whose rows must name a result and its rank
ON_RESULTS = (IMPRESSION, CLICK)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a row came from: a file and line, or an index and a document id."""

    file: str
    line: int | None = None
    doc: str = ""

    def error(self, problems: Problems, code: str, message: str) -> None:
        problems.error(code, self.file, self.line, f"document {self.doc}: {message}" if self.doc else message)


def _source(obj: dict[str, Any]) -> dict[str, Any]:
    inner = obj.get("_source")
    return inner if isinstance(inner, dict) else obj


def _path(obj: dict[str, Any], dotted: str) -> Any:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None and dotted in obj:  # a flattened export: {"event_attributes.position.ordinal": 3}
        return obj[dotted]
    return value


def _text(obj: dict[str, Any], key: str, place: Place, problems: Problems, *, required: bool) -> str | None:
    value = _path(obj, key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    if required or value not in (None, ""):
        place.error(
            problems, f"bad-{key.split('.')[-1]}", f"expected {key} (a string), found {value!r}"[:160]
        )
        return None
    return ""


def _moment(obj: dict[str, Any], place: Place, problems: Problems) -> datetime | None:
    moment = parse_timestamp(obj.get("timestamp"))
    if isinstance(moment, str):
        place.error(problems, "bad-timestamp", f"timestamp: {moment}")
        return None
    return moment


def _position(obj: dict[str, Any], action: str, place: Place, problems: Problems) -> int | None:
    value = _path(obj, "event_attributes.position.ordinal")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value  # 0: a 0-based log (:func:`one_based` shifts it)
    if action in ON_RESULTS or value is not None:
        place.error(
            problems,
            "bad-position",
            f"expected event_attributes.position.ordinal, the result's rank (0- or 1-based), on this {action} event, "
            f"found {value!r}",
        )
    return None


def parse_event(raw: dict[str, Any], place: Place, problems: Problems) -> UbiEvent | None:
    """The event of one ``ubi_events`` row, or ``None`` (with problems) when it cannot be read."""
    obj = _source(raw)
    action = _text(obj, "action_name", place, problems, required=True)
    query_id = _text(obj, "query_id", place, problems, required=False)
    moment = _moment(obj, place, problems)
    on_result = action in ON_RESULTS
    object_id = _text(obj, "event_attributes.object.object_id", place, problems, required=on_result)
    position = _position(obj, action or "", place, problems) if action else None
    user_query = _text(obj, "user_query", place, problems, required=False)
    if on_result and not query_id and not user_query:
        place.error(
            problems, "no-query", f"expected a query_id or user_query on this {action} event, found neither"
        )
        return None
    if action is None or query_id is None or moment is None or object_id is None or user_query is None:
        return None
    if on_result and position is None:
        return None
    client = _text(obj, "client_id", place, problems, required=False) or ""
    return UbiEvent(action, query_id, moment, object_id, position, user_query, client, place.line or 0)


def _hit_ids(obj: dict[str, Any], place: Place, problems: Problems) -> tuple[str, ...] | None:
    value = obj.get("query_response_hit_ids", [])
    if isinstance(value, str):  # one hit: a keyword field holds a single value as it is
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
        place.error(
            problems, "bad-hit-ids", f"expected query_response_hit_ids, a list of ids, found {value!r}"[:160]
        )
        return None
    return tuple(str(v) for v in value)


def has_text(raw: dict[str, Any]) -> bool:
    """Whether a ``ubi_queries`` row has query text (a search without it is skipped and counted)."""
    value = _path(_source(raw), "user_query")
    return not (value is None or (isinstance(value, str) and not value.strip()))


#: the action lines of a ``_bulk`` export (``{"index": {"_index": ...}}``), which are no rows
BULK_ACTIONS = ("index", "create", "update", "delete")


def bulk_row(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The row a line of a bulk NDJSON export holds: ``None`` for an action line, the ``doc`` of an update."""
    if len(obj) == 1 and next(iter(obj)) in BULK_ACTIONS and isinstance(next(iter(obj.values())), dict):
        return None
    doc = obj.get("doc")
    return doc if isinstance(doc, dict) and set(obj) <= {"doc", "doc_as_upsert"} else obj


def parse_query(raw: dict[str, Any], place: Place, problems: Problems) -> UbiQuery | None:
    """The search of one ``ubi_queries`` row, or ``None`` (with problems) when it cannot be read."""
    obj = _source(raw)
    query_id = _text(obj, "query_id", place, problems, required=True)
    user_query = _text(obj, "user_query", place, problems, required=True)
    moment = _moment(obj, place, problems)
    hits = _hit_ids(obj, place, problems)
    if query_id is None or user_query is None or moment is None or hits is None:
        return None
    client = _text(obj, "client_id", place, problems, required=False) or ""
    return UbiQuery(query_id, user_query, moment, hits, client, place.line or 0)
