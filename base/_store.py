"""One SQLite store under every on-disk cache: a file in WAL mode holding one table of rows by hex key.

A cache says what its rows hold (the table's name and value columns) and when a new row replaces a
stored one; the store does the rest, once: the connection (shared by threads behind one lock, shared
by processes through SQLite's own locking, waiting up to ``timeout_s`` for a writer), the schema
version (``PRAGMA user_version``: a file of another version is refused, never rewritten), reads in
chunks under SQLite's variable limit, and writes as one transaction each (``BEGIN IMMEDIATE``: after a
crash every committed batch is there and nothing half-written is). WAL lets any number of readers read
while one writes. Every SQLite or file-system failure is a ``CacheError`` (the one tree) that names the
file.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from base._exceptions import CacheError

SCHEMA_VERSION = 1
CHUNK = 500  # keys per SELECT (well under SQLite's variable limit)

Row = tuple[Any, ...]


class SqliteStore:
    """Rows by hex key in the table ``table`` of the SQLite file ``path`` (created with its folder)."""

    def __init__(
        self,
        path: Path,
        table: str,
        columns: Sequence[str],
        *,
        label: str = "cache",
        replace_when: str | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        """``columns``: the value columns' definitions (``"vec BLOB NOT NULL"``); ``replace_when``: an SQL
        condition on the stored row (``{table}.column``) under which a new row replaces it (None: always)."""
        if not table.isidentifier():
            raise CacheError(f"expected a table name, found {table!r}")
        self.path = path
        self.table = table
        self.label = label
        self.names = tuple(c.split()[0] for c in columns)
        self._replace_when = replace_when
        self._lock = threading.Lock()
        with self._errors("open"):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                path, timeout=timeout_s, check_same_thread=False, isolation_level=None
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._create(columns)

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """SQLite and file-system failures as a CacheError naming the file."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise CacheError(f"cannot {doing} the {self.label} at {self.path}") from exc

    def _create(self, columns: Sequence[str]) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            raise CacheError(
                f"{self.label} {self.path} has schema version {version}, expected {SCHEMA_VERSION}; "
                "delete the file to start a fresh cache"
            )
        if version != SCHEMA_VERSION:  # a new file: create the table (only then do we write)
            with self._transaction():
                definition = ", ".join(["key BLOB PRIMARY KEY", *columns])
                self._conn.execute(f"CREATE TABLE IF NOT EXISTS {self.table} ({definition}) WITHOUT ROWID")
                self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def get_many(self, keys: Iterable[str]) -> dict[str, Row]:
        """The stored rows (value columns, in order) among ``keys``; absent keys are simply missing."""
        wanted = [bytes.fromhex(k) for k in dict.fromkeys(keys)]
        found: dict[str, Row] = {}
        select = f"SELECT key, {', '.join(self.names)} FROM {self.table} WHERE key IN "
        with self._errors("read"), self._lock:
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                for key, *values in self._conn.execute(select + f"({','.join('?' * len(chunk))})", chunk):
                    found[key.hex()] = tuple(values)
        return found

    def put_many(self, rows: Iterable[tuple[str, Row]]) -> int:
        """Store (hex key, values) rows in one transaction; returns how many were given."""
        params = [(bytes.fromhex(key), *values) for key, values in rows]
        if not params:
            return 0
        updates = ", ".join(f"{n} = excluded.{n}" for n in self.names)
        where = f" WHERE {self._replace_when}" if self._replace_when else ""
        sql = (
            f"INSERT INTO {self.table} (key, {', '.join(self.names)}) VALUES ({', '.join('?' * (1 + len(self.names)))}) "
            f"ON CONFLICT(key) DO UPDATE SET {updates}{where}"
        )
        with self._errors("write to"), self._lock, self._transaction():
            self._conn.executemany(sql, params)
        return len(params)

    def __len__(self) -> int:
        with self._errors("read"), self._lock:
            return int(self._conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._errors("read"), self._lock:
            row = self._conn.execute(
                f"SELECT 1 FROM {self.table} WHERE key = ?", (bytes.fromhex(key),)
            ).fetchone()
        return row is not None

    def keys(self) -> Iterator[str]:
        with self._errors("read"), self._lock:
            rows = self._conn.execute(f"SELECT key FROM {self.table}").fetchall()
        return (row[0].hex() for row in rows)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
