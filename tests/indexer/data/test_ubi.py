"""UBI logs: ubi_queries / ubi_events rows read from JSON-lines exports (every problem at file:line) and from
a cluster's indices on both real engines, written back to both, and filtered the same way in either place."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from base import ConfigError, DataError
from indexer import (
    Backend,
    EventFilter,
    UbiEvent,
    UbiLog,
    UbiQuery,
    index_ubi,
    read_ubi_files,
    read_ubi_index,
    write_ubi_files,
)
from tests._support import drop_indices

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _event(action: str, qid: str, doc: str = "", rank: int | None = None, **extra: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if doc:
        attributes["object"] = {"object_id": doc, "object_id_field": "id"}
    if rank is not None:
        attributes["position"] = {"ordinal": rank}
    row = {"action_name": action, "query_id": qid, "timestamp": "2025-03-01T12:00:00Z"}
    return row | {"event_attributes": attributes} | extra


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_events_and_searches_read_with_their_fields(tmp_path: Path) -> None:
    events = _jsonl(
        tmp_path / "ubi_events.jsonl",
        [
            _event("impression", "q-1", "d1", 1, user_query="okra"),
            {"_index": "ubi_events", "_id": "x", "_source": _event("click", "q-1", "d1", 1)},  # a dump's envelope
            {"action_name": "click", "query_id": "q-2", "timestamp": 1740830400000,  # epoch millis
             "event_attributes.object.object_id": "d7", "event_attributes.position.ordinal": "3"},  # flattened
            _event("add_to_cart", "q-1"),  # not on a result: no object or rank needed
        ],
    )  # fmt: skip
    queries = _jsonl(
        tmp_path / "ubi_queries.jsonl",
        [{"query_id": "q-1", "user_query": "okra", "timestamp": "2025-03-01T11:59:59+01:00",
          "query_response_hit_ids": ["d1", "d2"], "client_id": "c"}],
    )  # fmt: skip
    log = read_ubi_files(events, queries)
    assert [(e.action, e.query_id, e.object_id, e.position) for e in log.events] == [
        ("impression", "q-1", "d1", 1),
        ("click", "q-1", "d1", 1),
        ("click", "q-2", "d7", 3),
        ("add_to_cart", "q-1", "", None),
    ]
    assert log.events[0].user_query == "okra" and log.events[2].timestamp == datetime(
        2025, 3, 1, 12, tzinfo=UTC
    )
    (search,) = log.queries
    assert search.hit_ids == ("d1", "d2") and search.timestamp == datetime(2025, 3, 1, 10, 59, 59, tzinfo=UTC)
    assert log.query_rows() == {"q-1": search}


@pytest.mark.parametrize(
    ("row", "line_text"),
    [
        (
            _event("click", "q", "d1", -1),
            "expected event_attributes.position.ordinal, the result's rank (0- or 1-based)",
        ),
        (_event("click", "q", "", 2), "expected event_attributes.object.object_id (a string), found None"),
        (_event("impression", "", "d1", 1), "expected a query_id or user_query on this impression event"),
        (
            {**_event("click", "q", "d1", 1), "timestamp": "yesterday"},
            "timestamp: expected an ISO 8601 timestamp",
        ),
        (
            {"query_id": "q", "timestamp": "2025-03-01T12:00:00Z"},
            "expected action_name (a string), found None",
        ),
        ([1, 2], "expected a JSON object, found an array"),
    ],
)
def test_a_bad_event_is_named_at_file_and_line(tmp_path: Path, row: Any, line_text: str) -> None:
    path = _jsonl(tmp_path / "ev.jsonl", [_event("click", "q", "d1", 1), row])
    with pytest.raises(DataError) as info:
        read_ubi_files(path)
    assert f"ev.jsonl:2: error: {line_text}" in str(info.value).replace(str(tmp_path) + "/", "")


def test_a_bad_search_row_and_a_missing_file(tmp_path: Path) -> None:
    events = _jsonl(tmp_path / "e.jsonl", [_event("click", "q", "d1", 1)])
    queries = _jsonl(tmp_path / "q.jsonl", [{"query_id": "q", "user_query": "x", "timestamp": T0.isoformat(),
                                             "query_response_hit_ids": {"d1": 1}}])  # fmt: skip
    with pytest.raises(DataError, match=r"q\.jsonl:1: error: expected query_response_hit_ids, a list of ids"):
        read_ubi_files(events, queries)
    with pytest.raises(ConfigError, match="expected a JSON-lines file of UBI events"):
        read_ubi_files(tmp_path / "none.jsonl")


def test_the_event_filter_keeps_actions_ranks_and_days() -> None:
    keep = EventFilter(max_rank=3, start=date(2025, 3, 1), end=date(2025, 3, 1))
    at = datetime(2025, 3, 1, 23, 59, 59, tzinfo=UTC)
    assert keep.keep(UbiEvent("click", "q", at, "d", 3))
    assert not keep.keep(UbiEvent("click", "q", at, "d", 4))  # below the max rank
    assert not keep.keep(UbiEvent("view", "q", at, "d", 1))  # not an impression or click
    assert not keep.keep(
        UbiEvent("click", "q", datetime(2025, 3, 2, tzinfo=UTC), "d", 1)
    )  # after the end day
    assert not keep.keep(UbiEvent("click", "q", datetime(2025, 2, 28, 23, tzinfo=UTC), "d", 1))
    with pytest.raises(ConfigError, match="start <= end"):
        EventFilter(start=date(2025, 3, 2), end=date(2025, 3, 1))


def _log() -> UbiLog:
    events = []
    for n in range(40):  # 40 searches over 4 days, 3 results shown each, the first clicked
        at = datetime(2025, 3, 1 + n // 10, 9, n, tzinfo=UTC)
        shown = [f"d{(n + r) % 7}" for r in range(3)]
        events += [
            UbiEvent("impression", f"s{n}", at, d, r, f"query {n % 4}", "c") for r, d in enumerate(shown, 1)
        ]
        events.append(UbiEvent("click", f"s{n}", at, shown[0], 1, f"query {n % 4}", "c"))
    queries = tuple(
        UbiQuery(f"s{n}", f"query {n % 4}", datetime(2025, 3, 1, tzinfo=UTC), ("d1",)) for n in range(40)
    )
    return UbiLog(queries, tuple(events))


def test_files_written_read_back_the_same(tmp_path: Path) -> None:
    log = _log()
    queries, events = write_ubi_files(tmp_path, log)
    back = read_ubi_files(events, queries)
    strip = lambda items: [type(x)(*[getattr(x, f) for f in x.__slots__ if f != "line"]) for x in items]  # noqa: E731
    assert strip(back.events) == strip(log.events) and strip(back.queries) == strip(log.queries)
    assert back.events[0].line == 1


def test_a_cluster_log_reads_like_its_files(backend: Backend, tmp_path: Path) -> None:
    prefix = "r2med-test-ubi"
    drop_indices(backend, f"{prefix}-*")
    log = _log()
    names = {"events_index": f"{prefix}-events", "queries_index": f"{prefix}-queries"}
    assert index_ubi(backend, log, **names) == (40, 160)
    keep = EventFilter(max_rank=2, start=date(2025, 3, 2), end=date(2025, 3, 3))
    from_index = read_ubi_index(backend, keep=keep, **names)
    queries, events = write_ubi_files(tmp_path, log)
    from_files = read_ubi_files(events, queries, keep=keep)
    key = lambda e: (e.query_id, e.action, e.position)  # noqa: E731
    assert sorted(map(key, from_index.events)) == sorted(map(key, from_files.events))
    assert len(from_index.events) == 20 * 3  # days 2 and 3: 20 searches, 2 impressions and a click each
    assert len(from_index.queries) == 40 and backend.url in from_index.source


def test_a_missing_events_index_is_named_and_a_missing_queries_index_is_noted(backend: Backend) -> None:
    prefix = "r2med-test-ubi-only"
    drop_indices(backend, f"{prefix}-*")
    with pytest.raises(ConfigError, match=f"expected the UBI events index {prefix}-events on"):
        read_ubi_index(backend, events_index=f"{prefix}-events")
    index_ubi(
        backend, UbiLog((), _log().events), events_index=f"{prefix}-events", queries_index=f"{prefix}-q"
    )
    backend.delete_index(f"{prefix}-q")
    got = read_ubi_index(backend, events_index=f"{prefix}-events", queries_index=f"{prefix}-q")
    assert len(got.events) == 160 and got.queries == () and f"(no {prefix}-q index)" in got.source


def test_a_log_as_opensearch_tooling_writes_it(tmp_path: Path) -> None:
    # bulk NDJSON (action lines), 0-based ordinals, and searches without query text: read, said once, counted
    events = [{"index": {"_index": "ubi_events"}}, _event("impression", "q1", "d1", 0),
              {"index": {"_index": "ubi_events"}}, _event("click", "q1", "d1", 0),
              {"create": {"_index": "ubi_events", "_id": "x"}}, _event("impression", "q1", "d2", 1)]  # fmt: skip
    searches = [
        {"index": {"_index": "ubi_queries"}},
        {
            "query_id": "q1",
            "user_query": "okra",
            "timestamp": T0.isoformat(),
            "query_response_hit_ids": ["d1"],
        },
        {"index": {"_index": "ubi_queries"}},
        {"query_id": "q2", "user_query": "", "timestamp": T0.isoformat(), "query_response_hit_ids": ["d3"]},
        {"query_id": "q3", "timestamp": T0.isoformat(), "query_response_hit_ids": ["d4"]},
    ]
    log = read_ubi_files(_jsonl(tmp_path / "e.ndjson", events), _jsonl(tmp_path / "q.ndjson", searches))
    assert [e.position for e in log.events] == [1, 1, 2]
    assert [q.query_id for q in log.queries] == ["q1"] and log.skipped_searches == 2
    assert len(log.notes) == 2 and "0-based (2 events at ordinal 0)" in log.notes[0]
    assert "2 searches without query text" in log.notes[1]
    one_based = read_ubi_files(_jsonl(tmp_path / "e1.jsonl", [_event("click", "q1", "d1", 1)]))
    assert one_based.events[0].position == 1 and not one_based.notes
