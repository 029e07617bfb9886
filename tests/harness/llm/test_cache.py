"""``JsonCache``: JSON values by content key, committed per put, shared by threads and processes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.llm import JsonCache, digest


def test_digest_is_length_prefixed() -> None:
    assert digest("ns", "ab", "c") != digest("ns", "a", "bc")
    assert digest("ns", "x") == digest("ns", "x") and len(digest("ns")) == 64


def test_values_round_trip_and_survive_reopening(tmp_path: Path) -> None:
    key = digest("t", "q1")
    with JsonCache("gen", tmp_path) as cache:
        assert cache.get(key) is None
        cache.put(key, {"content": "é", "tokens": [1, 2]})
        assert cache.get(key) == {"content": "é", "tokens": [1, 2]}
        assert (cache.hits, cache.misses) == (1, 1)
    with JsonCache("gen", tmp_path) as cache:
        assert cache.get_many([key, digest("t", "other")]) == {key: {"content": "é", "tokens": [1, 2]}}
        assert len(cache) == 1


def test_concurrent_threads_and_another_process(tmp_path: Path) -> None:
    cache = JsonCache("gen", tmp_path)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: cache.put(digest("t", str(i)), i), range(200)))
    code = (
        "from harness.llm import JsonCache, digest\n"
        f"c = JsonCache('gen', {str(tmp_path)!r})\n"
        "c.put(digest('t', 'from-child'), 'child')\n"
        "print(len(c))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "201"
    assert cache.get(digest("t", "from-child")) == "child"
    assert cache.get(digest("t", "199")) == 199
    cache.close()


def test_a_cache_file_written_before_the_shared_store_is_read_and_extended(tmp_path: Path) -> None:
    """The schema as JsonCache wrote it before indexer's SqliteStore existed: same file, table and version."""
    old = sqlite3.connect(tmp_path / "gen.sqlite3", isolation_level=None)
    old.execute("CREATE TABLE items (key BLOB PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
    old.execute("PRAGMA user_version=1")
    old.execute("INSERT INTO items VALUES (?, ?)", (bytes.fromhex(digest("t", "old")), '{"content": "kept"}'))
    old.execute("INSERT INTO items VALUES (?, ?)", (bytes.fromhex(digest("t", "bad")), "{not json"))
    old.close()
    with JsonCache("gen", tmp_path) as cache:
        assert cache.get_many([digest("t", "old"), digest("t", "bad")]) == {
            digest("t", "old"): {"content": "kept"}
        }
        cache.put(digest("t", "bad"), "replaced")  # a damaged row is overwritten by the next put
        assert cache.get(digest("t", "bad")) == "replaced" and len(cache) == 2
