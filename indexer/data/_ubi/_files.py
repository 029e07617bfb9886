"""UBI logs as JSON-lines files: one ``ubi_events`` row (and one ``ubi_queries`` row) per line.

Every problem is reported at ``file:line`` in one :class:`DataError`; nothing partial is returned. A
``_bulk`` export (NDJSON with an action line before each row) reads the same; a search without query text
is skipped and counted; a log whose ranks count from 0 is read with each rank shifted by one (said once).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from base import ConfigError, write_jsonl_atomic
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
from indexer.data._ubi._parse import Place, bulk_row, has_text, parse_event, parse_query
from indexer.data._validate import DataFile, Problems, json_records


def _file(path: Path | str, what: str) -> DataFile:
    found = Path(path).expanduser()
    if not found.is_file():
        raise ConfigError(f"expected a JSON-lines file of {what} at {found}, found no file")
    return DataFile(found, str(found))


def _rows(file: DataFile, problems: Problems) -> Iterator[tuple[int, dict[str, object]]]:
    for line, obj in json_records(file, problems):
        row = bulk_row(obj)
        if row is not None:
            yield line, row


def _events(file: DataFile, problems: Problems) -> Iterator[UbiEvent]:
    for line, obj in _rows(file, problems):
        event = parse_event(obj, Place(file.name, line), problems)
        if event is not None:
            yield event


def _queries(file: DataFile, problems: Problems, skipped: list[int]) -> Iterator[UbiQuery]:
    for line, obj in _rows(file, problems):
        if not has_text(obj):
            skipped.append(line)
            continue
        query = parse_query(obj, Place(file.name, line), problems)
        if query is not None:
            yield query


def read_ubi_files(
    events: Path | str, queries: Path | str | None = None, *, keep: EventFilter | None = None
) -> UbiLog:
    """The log in a ``ubi_events`` export (and its ``ubi_queries`` export, when given); ``keep``: only
    the events it keeps (the searches are all read: events refer to them)."""
    problems = Problems()
    event_file = _file(events, "UBI events")
    found_events, ranks = one_based(tuple(_events(event_file, problems)))
    if keep is not None:
        found_events = tuple(e for e in found_events if keep.keep(e))
    query_file = _file(queries, "UBI queries") if queries is not None else None
    skipped: list[int] = []
    found_queries = tuple(_queries(query_file, problems, skipped)) if query_file else ()
    names = event_file.name + (f" and {query_file.name}" if query_file else "")
    problems.raise_if_errors(f"UBI log {names}")
    notes = tuple(n for n in (ranks, skipped_note(len(skipped))) if n)
    return UbiLog(found_queries, found_events, source=names, skipped_searches=len(skipped), notes=notes)


def write_ubi_files(folder: Path | str, log: UbiLog) -> tuple[Path, Path]:
    """``ubi_queries.jsonl`` and ``ubi_events.jsonl`` in ``folder`` (atomically); the two paths."""
    root = Path(folder).expanduser()
    queries, events = root / f"{QUERIES_INDEX}.jsonl", root / f"{EVENTS_INDEX}.jsonl"
    write_jsonl_atomic(queries, (q.to_source() for q in log.queries))
    write_jsonl_atomic(events, (e.to_source() for e in log.events))
    return queries, events
