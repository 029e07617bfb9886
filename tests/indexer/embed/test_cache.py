from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from base import CacheError, EmbeddingError
from indexer.embed import CACHE_FILE, EmbeddingCache, ModelSpec, cache_key, default_cache_dir, spec_key


def vec(seed: int, dims: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


def test_key_is_stable_and_changes_with_every_part() -> None:
    base = cache_key("m", "r1", "query: ", "text")
    assert base == cache_key("m", "r1", "query: ", "text")
    assert len(base) == 64
    variants = {
        cache_key("m2", "r1", "query: ", "text"),
        cache_key("m", "r2", "query: ", "text"),
        cache_key("m", "r1", "passage: ", "text"),
        cache_key("m", "r1", "query: ", "text!"),
        cache_key("m", "r1", "query: ", "text", normalize=False),
        # concatenation ambiguity: prompt + text is the same string, the key is not
        cache_key("m", "r1", "query:", " text"),
    }
    assert base not in variants
    assert len(variants) == 6


def test_spec_key_follows_model_revision_and_prompt(minilm: ModelSpec) -> None:
    import dataclasses

    key = spec_key(minilm, "", "aspirin")
    assert spec_key(minilm, "query: ", "aspirin") != key
    assert spec_key(dataclasses.replace(minilm, revision="other"), "", "aspirin") != key
    assert spec_key(dataclasses.replace(minilm, model_id="x/other"), "", "aspirin") != key
    # prompts are part of the key, not of the spec identity
    assert spec_key(minilm.with_prompts(document_prompt="passage: "), "", "aspirin") == key


def test_round_trip_and_counters(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    items = {cache_key("m", "r", "", f"t{i}"): vec(i) for i in range(1200)}  # more than one SELECT chunk
    assert cache.put_many(items.items()) == 1200
    absent = cache_key("m", "r", "", "never")
    got = cache.get_many([*items, absent])
    assert set(got) == set(items)
    for key, vector in items.items():
        assert np.array_equal(got[key], vector)
        assert got[key].dtype == np.float32
    assert (cache.hits, cache.misses) == (1200, 1)
    assert len(cache) == 1200
    assert absent not in cache and next(iter(items)) in cache
    cache.close()


def test_entries_persist_across_instances(tmp_path: Path) -> None:
    key = cache_key("m", "r", "", "persist")
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many([(key, vec(1))])
    with EmbeddingCache(tmp_path) as reopened:
        assert np.array_equal(reopened.get_many([key])[key], vec(1))


def test_readers_see_committed_rows_while_a_writer_holds_a_transaction(tmp_path: Path) -> None:
    committed, pending = cache_key("m", "r", "", "a"), cache_key("m", "r", "", "b")
    writer = EmbeddingCache(tmp_path)
    writer.put_many([(committed, vec(1))])
    raw = sqlite3.connect(tmp_path / CACHE_FILE, isolation_level=None)
    raw.execute("BEGIN IMMEDIATE")
    raw.execute("INSERT INTO vectors VALUES (?, ?, ?)", (bytes.fromhex(pending), 8, vec(2).tobytes()))
    reader = EmbeddingCache(tmp_path, timeout_s=1)
    assert set(reader.get_many([committed, pending])) == {committed}  # not blocked, no dirty read
    raw.execute("COMMIT")
    assert set(reader.get_many([committed, pending])) == {committed, pending}
    raw.close()
    reader.close()
    writer.close()


def test_non_vectors_are_refused(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path) as cache, pytest.raises(EmbeddingError, match="1-d vectors"):
        cache.put_many([(cache_key("m", "r", "", "x"), np.zeros((2, 2)))])


def test_a_file_that_is_not_a_cache_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    with pytest.raises(CacheError, match="cannot open the embedding cache"):
        EmbeddingCache(tmp_path)


def test_default_location_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("R2MED_HARNESS_CACHE", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("R2MED_HARNESS_CACHE")
    assert default_cache_dir() == tmp_path / "xdg" / "r2med-harness"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "r2med-harness"
    monkeypatch.setenv("R2MED_HARNESS_CACHE", str(tmp_path / "explicit"))
    assert EmbeddingCache().path == tmp_path / "explicit" / "embeddings" / CACHE_FILE


def test_a_cache_file_written_before_the_shared_store_is_read_and_extended(tmp_path: Path) -> None:
    """The schema as the embedding cache wrote it before indexer's SqliteStore existed (same file, table,
    columns and user_version), so every cache on users' disks stays valid."""
    old = sqlite3.connect(tmp_path / CACHE_FILE, isolation_level=None)
    old.execute(
        "CREATE TABLE vectors ( key BLOB PRIMARY KEY, dims INTEGER NOT NULL, vec BLOB NOT NULL) WITHOUT ROWID"
    )
    old.execute("PRAGMA user_version=1")
    key = cache_key("m", "r", "", "from before")
    old.execute("INSERT INTO vectors VALUES (?, ?, ?)", (bytes.fromhex(key), 8, vec(3).tobytes()))
    old.close()
    with EmbeddingCache(tmp_path) as cache:
        assert np.array_equal(cache.get_many([key])[key], vec(3))
        cache.put_many([(cache_key("m", "r", "", "after"), vec(4))])
        assert len(cache) == 2


def test_a_damaged_vector_is_a_miss_and_is_rewritten(tmp_path: Path) -> None:
    key = cache_key("m", "r", "", "damaged")
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many([(key, vec(1))])
    raw = sqlite3.connect(tmp_path / CACHE_FILE, isolation_level=None)
    raw.execute("UPDATE vectors SET vec = ? WHERE key = ?", (b"\x00" * 5, bytes.fromhex(key)))
    raw.close()
    with EmbeddingCache(tmp_path) as cache:
        assert cache.get_many([key]) == {}
        cache.put_many([(key, vec(2))])
        assert np.array_equal(cache.get_many([key])[key], vec(2))
        cache.put_many([(key, vec(3))])  # a sound vector is kept
        assert np.array_equal(cache.get_many([key])[key], vec(2))
