"""A content-addressed on-disk cache of JSON values (on indexer's :class:`~indexer.SqliteStore`).

The embedding cache holds vectors; this one holds anything JSON can say: LLM generations (an answer,
its reasoning, its token counts), and later judgments. Keys are :func:`digest` of the parts that
determine the value, so a value is reused exactly when it would come out the same. Every ``put``
commits at once: an interrupted run keeps each finished item, and nothing half-written. Any number
of threads and processes may read while one writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from base import SqliteStore, default_cache_dir

#: the table and its value column (the schema of every generations cache written so far)
TABLE, COLUMNS = "items", ("value TEXT NOT NULL",)


def digest(namespace: str, *parts: str) -> str:
    """Hex sha256 of length-prefixed parts (no two different tuples collide by concatenation)."""
    h = hashlib.sha256()
    for part in (namespace, *parts):
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


class JsonCache:
    """JSON values by hex key in ``<directory>/<name>.sqlite3``. Thread-safe; processes may share it."""

    def __init__(self, name: str, directory: str | Path | None = None, *, timeout_s: float = 60.0) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir() / name
        self.path = self.directory / f"{name}.sqlite3"
        self.hits = 0
        self.misses = 0
        self.store = SqliteStore(self.path, TABLE, COLUMNS, label="cache", timeout_s=timeout_s)

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The cached values among ``keys``; absent (or unreadable) keys are simply missing."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        for key, (text,) in self.store.get_many(wanted).items():
            try:
                found[key] = json.loads(text)
            except ValueError:
                continue  # a damaged row is a miss, and is overwritten by the next put
        self.hits += len(found)
        self.misses += len(wanted) - len(found)
        return found

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> int:
        """Store values in one transaction (replacing any earlier value); returns how many."""
        pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
        return self.store.put_many(
            (k, (json.dumps(v, ensure_ascii=False, sort_keys=True),)) for k, v in pairs
        )

    def put(self, key: str, value: Any) -> None:
        self.put_many([(key, value)])

    def __len__(self) -> int:
        return len(self.store)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> JsonCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
