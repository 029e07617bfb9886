"""``SqliteStore``: the one SQLite store under the embedding cache and the JSON cache."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from base import CacheError, SqliteStore

COLUMNS = ("dims INTEGER NOT NULL", "vec BLOB NOT NULL")
DAMAGED = "length(rows.vec) != rows.dims * 4"


def key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def store(path: Path, **kwargs: object) -> SqliteStore:
    return SqliteStore(path / "s.sqlite3", "rows", COLUMNS, label="test cache", **kwargs)  # type: ignore[arg-type]


def test_rows_round_trip_over_more_than_one_chunk(tmp_path: Path) -> None:
    rows = [(key(str(i)), (4, bytes(16))) for i in range(1200)]
    with store(tmp_path / "new" / "folder") as s:
        assert s.put_many(rows) == 1200 and s.put_many([]) == 0
        found = s.get_many([k for k, _ in rows] + [key("absent")])
        assert found == dict(rows)
        assert len(s) == 1200 and key("0") in s and key("absent") not in s and 42 not in s
        assert set(s.keys()) == {k for k, _ in rows}


def test_a_stored_row_is_replaced_only_when_the_condition_holds(tmp_path: Path) -> None:
    good, bad = key("good"), key("bad")
    with store(tmp_path, replace_when=DAMAGED) as s:
        s.put_many([(good, (1, b"\x00\x00\x80\x3f")), (bad, (2, b"\x00"))])
        s.put_many([(good, (1, b"\x00\x00\x00\x40")), (bad, (1, b"\x00\x00\x00\x40"))])
        assert s.get_many([good, bad]) == {good: (1, b"\x00\x00\x80\x3f"), bad: (1, b"\x00\x00\x00\x40")}
    with store(tmp_path) as s:  # no condition: a new row always wins
        s.put_many([(good, (1, b"\x00\x00\x00\x40"))])
        assert s.get_many([good])[good] == (1, b"\x00\x00\x00\x40")


def test_a_file_of_another_schema_version_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version=7")
    raw.close()
    with pytest.raises(CacheError, match=r"test cache .*s\.sqlite3 has schema version 7, expected 1"):
        store(tmp_path)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 7
    assert raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    raw.close()


def test_a_write_that_cannot_get_the_lock_is_a_cache_error_and_leaves_nothing(tmp_path: Path) -> None:
    with store(tmp_path, timeout_s=0.2) as s:
        holder = sqlite3.connect(tmp_path / "s.sqlite3", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(CacheError, match=r"cannot write to the test cache at .*s\.sqlite3") as info:
            s.put_many([(key("x"), (0, b""))])
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)
        holder.execute("ROLLBACK")
        holder.close()
        assert len(s) == 0
        s.put_many([(key("x"), (0, b""))])  # the store is still usable once the lock is free
        assert len(s) == 1


def test_not_a_database_and_not_a_table_name_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "s.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError, match=r"cannot open the test cache at .*s\.sqlite3"):
        store(tmp_path)
    with pytest.raises(CacheError, match="expected a table name"):
        SqliteStore(tmp_path / "t.sqlite3", "rows; DROP TABLE x", COLUMNS)
