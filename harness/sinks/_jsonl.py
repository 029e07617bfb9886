"""JSONL sink: records as one JSON object per line, without Elasticsearch."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from base import write_jsonl_atomic
from harness._errors import RunError
from harness.results import EvalRecord
from harness.sinks._base import SinkBase


class JsonlSink(SinkBase):
    """Writes records to ``path``. Idempotent per (run, dataset, arm, query) within the file.

    Records already in the file are read first; a record with the same key replaces the
    old one, so re-writing a run leaves one line per record. The file is rewritten
    atomically after each write.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._records: dict[str, EvalRecord] = {}
        if self.path.exists():
            for lineno, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = EvalRecord.from_json(json.loads(line), f"{self.path}:{lineno}")
                except ValueError:
                    raise RunError(
                        f"{self.path}:{lineno}: expected an evaluation record (one JSON object per line), "
                        f"found {line[:80]!r}"
                    ) from None
                self._records[record.id] = record
        self._dirty = False

    def write(self, records: Iterable[EvalRecord]) -> int:
        count = 0
        for record in records:
            self._records[record.id] = record
            count += 1
        self._dirty = self._dirty or count > 0
        self.flush()
        return count

    def flush(self) -> None:
        if self._dirty:
            write_jsonl_atomic(self.path, (r.to_json() for r in self._records.values()), sort_keys=True)
            self._dirty = False

    def close(self) -> None:
        self.flush()
