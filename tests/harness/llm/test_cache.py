"""``JsonCache``: JSON values by content key, committed per put, shared by threads and processes."""

from __future__ import annotations

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
