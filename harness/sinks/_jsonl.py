"""JSONL sink: records as one JSON object per line, without Elasticsearch."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.inspect._records import record_id
from harness.sinks._base import SinkBase
from indexer import RunError


class JsonlSink(SinkBase):
    """Writes records to ``path``. Idempotent per (run, dataset, arm, query) within the file.

    Records already in the file are read first; a record with the same key replaces the
    old one, so re-writing a run leaves one line per record. The file is rewritten
    atomically on :meth:`close` (a temporary file renamed over it).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._records: dict[str, Mapping[str, Any]] = {}
        if self.path.exists():
            for lineno, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    self._records[_key(record)] = record
                except (ValueError, KeyError, TypeError) as exc:
                    raise RunError(
                        f"{self.path}:{lineno}: expected an evaluation record (JSON with run_id, dataset, "
                        f"arm, query.id), found {line[:80]!r}"
                    ) from exc
        self._dirty = False

    def write(self, records: Iterable[Mapping[str, Any]]) -> int:
        count = 0
        for record in records:
            self._records[_key(record)] = record
            count += 1
        self._dirty = self._dirty or count > 0
        self.flush()
        return count

    def flush(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            for record in self._records.values():
                fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        tmp.replace(self.path)
        self._dirty = False

    def close(self) -> None:
        self.flush()


def _key(record: Mapping[str, Any]) -> str:
    return record_id(record["run_id"], record["dataset"], record["arm"], record["query"]["id"])
