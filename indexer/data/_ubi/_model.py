"""User Behavior Insights (UBI) logs, typed: the searches (``ubi_queries``) and what users did (``ubi_events``).

The fields read (UBI specification 1.x, as OpenSearch's UBI plugin maps its two indices; the
Search Relevance Workbench's click model reads the same event fields):

``ubi_queries`` (one row per search)
    ``query_id`` (keyword, the join key), ``user_query`` (the text the user typed),
    ``query_response_hit_ids`` (the ids of the hits returned, in rank order), ``timestamp``,
    ``client_id``.
``ubi_events`` (one row per user action)
    ``action_name`` (``impression``, ``click``, ...), ``query_id`` (the search the action
    followed), ``user_query`` (on the event row too: the Workbench reads it there),
    ``event_attributes.object.object_id`` (the result acted on),
    ``event_attributes.position.ordinal`` (its 1-based rank), ``timestamp``, ``client_id``.

Other fields are kept out: nothing here needs them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from base import ConfigError

QUERIES_INDEX = "ubi_queries"
EVENTS_INDEX = "ubi_events"
IMPRESSION = "impression"
CLICK = "click"


@dataclass(frozen=True, slots=True)
class UbiQuery:
    """One search: its id, the text typed, the hits shown (in rank order) and when."""

    query_id: str
    user_query: str
    timestamp: datetime
    hit_ids: tuple[str, ...] = ()
    client_id: str = ""
    line: int = 0
    """The line it was read from (0: read from an index)."""

    def to_source(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "user_query": self.user_query,
            "timestamp": iso(self.timestamp),
            "query_response_hit_ids": list(self.hit_ids),
            "client_id": self.client_id,
        }


@dataclass(frozen=True, slots=True)
class UbiEvent:
    """One user action on a result (or on the page: then ``object_id`` and ``position`` are empty)."""

    action: str
    query_id: str
    timestamp: datetime
    object_id: str = ""
    position: int | None = None
    user_query: str = ""
    client_id: str = ""
    line: int = 0

    def to_source(self) -> dict[str, Any]:
        attributes: dict[str, Any] = {}
        if self.object_id:
            attributes["object"] = {"object_id": self.object_id}
        if self.position is not None:
            attributes["position"] = {"ordinal": self.position}
        return {
            "action_name": self.action,
            "query_id": self.query_id,
            "user_query": self.user_query,
            "client_id": self.client_id,
            "timestamp": iso(self.timestamp),
            "event_attributes": attributes,
        }


@dataclass(frozen=True, slots=True)
class UbiLog:
    """The searches and events of one UBI log, and where they were read from."""

    queries: tuple[UbiQuery, ...]
    events: tuple[UbiEvent, ...]
    source: str = ""
    skipped_searches: int = 0
    """Searches without query text (``user_query`` empty or absent): skipped, as the click model skips them."""
    notes: tuple[str, ...] = ()
    """What the reader decided about the log, said once (0-based ranks, searches skipped)."""

    def query_rows(self) -> dict[str, UbiQuery]:
        """The searches by ``query_id`` (the first row wins where an id repeats)."""
        rows: dict[str, UbiQuery] = {}
        for q in self.queries:
            rows.setdefault(q.query_id, q)
        return rows


def one_based(events: tuple[UbiEvent, ...]) -> tuple[tuple[UbiEvent, ...], str | None]:
    """The events with 1-based ranks: a log with a ``position.ordinal`` of 0 counts from 0 (as OpenSearch's
    relevance tooling writes it), so every rank in it is shifted by one; the note that says so, once."""
    zero = sum(e.position == 0 for e in events)
    if not zero:
        return events, None
    shifted = tuple(replace(e, position=e.position + 1) if e.position is not None else e for e in events)
    note = (
        f"position.ordinal read as 0-based ({zero} events at ordinal 0): every rank shifted by one "
        "(rank 1 is the top result)"
    )
    return shifted, note


def skipped_note(skipped: int) -> str | None:
    """What is said of the searches without query text, when there are any."""
    if not skipped:
        return None
    return f"{skipped} searches without query text (user_query empty) skipped, with their events"


def iso(moment: datetime) -> str:
    """The timestamp as UBI writes it: ISO 8601 in UTC with a trailing ``Z`` (what OpenSearch requires)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_timestamp(value: Any) -> datetime | str:
    """A timestamp (ISO 8601, or epoch milliseconds as the plugin's mapping allows), or what is wrong."""
    if isinstance(value, bool):
        return f"expected an ISO 8601 timestamp, found {value!r}"
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value / 1000.0, tz=UTC)
    if not isinstance(value, str) or not value.strip():
        return f"expected an ISO 8601 timestamp, found {value!r}"
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return f"expected an ISO 8601 timestamp, found {value[:40]!r}"
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events a click model reads: its actions, ranks up to ``max_rank``, days ``start``..``end``
    (inclusive, UTC). One definition, applied in the engine (:meth:`query`) and to files (:meth:`keep`)."""

    actions: tuple[str, ...] = (IMPRESSION, CLICK)
    max_rank: int | None = None
    start: date | None = None
    end: date | None = None

    def __post_init__(self) -> None:
        if self.max_rank is not None and self.max_rank < 1:
            raise ConfigError(f"expected a max rank of 1 or more, found {self.max_rank}")
        if self.start and self.end and self.start > self.end:
            raise ConfigError(f"expected a date window start <= end, found {self.start} > {self.end}")

    def in_window(self, moment: datetime) -> bool:
        day = moment.astimezone(UTC)
        if self.start and day < datetime.combine(self.start, time(), UTC):
            return False
        return not (self.end and day >= datetime.combine(self.end + timedelta(days=1), time(), UTC))

    def keep(self, event: UbiEvent) -> bool:
        if event.action not in self.actions or not self.in_window(event.timestamp):
            return False
        return self.max_rank is None or (event.position is not None and event.position <= self.max_rank)

    def query(self) -> dict[str, Any]:
        """The same filter as an engine query over ``ubi_events``."""
        clauses: list[dict[str, Any]] = [{"terms": {"action_name": list(self.actions)}}]
        if self.max_rank is not None:
            clauses.append({"range": {"event_attributes.position.ordinal": {"lte": self.max_rank}}})
        clauses += self.window_clauses()
        return {"bool": {"filter": clauses}}

    def window_clauses(self) -> list[dict[str, Any]]:
        span: dict[str, str] = {}
        if self.start:
            span["gte"] = iso(datetime.combine(self.start, time(), UTC))
        if self.end:
            span["lt"] = iso(datetime.combine(self.end + timedelta(days=1), time(), UTC))
        return [{"range": {"timestamp": span}}] if span else []
