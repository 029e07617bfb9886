"""A content-addressed on-disk cache of JSON values (SQLite in WAL mode).

The embedding cache holds vectors; this one holds anything JSON can say: LLM
generations (an answer, its reasoning, its token counts), and later reranker
scores. Keys are :func:`digest` of the parts that determine the value, so a value
is reused exactly when it would come out the same. Every ``put`` commits at once:
an interrupted run keeps each finished item, and nothing half-written. WAL lets
any number of threads and processes read while one writes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from indexer import CacheError, default_cache_dir

_SCHEMA_VERSION = 1
_CHUNK = 500


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
        self._lock = threading.Lock()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, timeout=timeout_s, check_same_thread=False, isolation_level=None
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _SCHEMA_VERSION):
                raise CacheError(
                    f"cache {self.path} has schema version {version}, expected {_SCHEMA_VERSION}; "
                    "delete the file to start a fresh cache"
                )
            if version != _SCHEMA_VERSION:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS items (key BLOB PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"
                )
                self._conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
                self._conn.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            raise CacheError(f"cannot open the cache at {self.path}") from exc

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The cached values among ``keys``; absent (or unreadable) keys are simply missing."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        try:
            with self._lock:
                for start in range(0, len(wanted), _CHUNK):
                    chunk = [bytes.fromhex(k) for k in wanted[start : start + _CHUNK]]
                    marks = ",".join("?" * len(chunk))
                    rows = self._conn.execute(
                        f"SELECT key, value FROM items WHERE key IN ({marks})", chunk
                    ).fetchall()
                    for key, text in rows:
                        try:
                            found[key.hex()] = json.loads(text)
                        except ValueError:
                            continue  # a damaged row is a miss, and is overwritten by the next put
        except sqlite3.Error as exc:
            raise CacheError(f"cannot read the cache at {self.path}") from exc
        self.hits += len(found)
        self.misses += len(wanted) - len(found)
        return found

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> int:
        """Store values in one transaction (replacing any earlier value); returns how many."""
        pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
        rows = [(bytes.fromhex(k), json.dumps(v, ensure_ascii=False, sort_keys=True)) for k, v in pairs]
        if not rows:
            return 0
        try:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.executemany("INSERT OR REPLACE INTO items (key, value) VALUES (?, ?)", rows)
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise CacheError(f"cannot write to the cache at {self.path}") from exc
        return len(rows)

    def put(self, key: str, value: Any) -> None:
        self.put_many([(key, value)])

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM items").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> JsonCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
