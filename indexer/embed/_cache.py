"""A content-addressed on-disk cache of embeddings (SQLite in WAL mode).

Keys are ``sha256(model_id, revision, prompt, text)`` (plus the normalisation
flag, the backend and precision when they are not the torch fp32 reference, and
the pooling when it is not the model folder's own), so a vector is reused exactly
when it would come out the same (the revision is a hub commit or a hash of a
local folder's files, so new weights under the same name never hit), and
vectors from different numerics (int8 ONNX, fp16 on a GPU) never mix. Keys of
the reference numerics are the ones this cache has always used, so caches made
before backends existed stay valid. Each ``put_many`` is one transaction: after a crash every committed batch is there
and nothing half-written is. WAL lets any number of readers (threads or
processes) read while one writes.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

import numpy as np

from indexer._exceptions import EmbeddingError
from indexer._paths import default_cache_dir
from indexer.embed._models import ModelSpec

CACHE_FILE = "vectors.sqlite3"
_SCHEMA_VERSION = 1
_CHUNK = 500  # keys per SELECT (well under SQLite's variable limit)


def default_embedding_cache_dir() -> Path:
    return default_cache_dir() / "embeddings"


def cache_key(
    model_id: str,
    revision: str,
    prompt: str,
    text: str,
    *,
    normalize: bool = True,
    numerics: str = "",
    pooling: str | None = None,
) -> str:
    """Hex sha256 of the length-prefixed parts (so no two different tuples collide by concatenation).

    ``numerics`` is ``backend/precision``, empty for the reference (torch fp32); ``pooling`` is set only
    when it is not the model folder's own.
    """
    digest = hashlib.sha256()
    parts = ["r2med-embedding-v1", model_id, revision, "norm" if normalize else "raw"]
    if numerics:
        parts.append(f"numerics={numerics}")
    if pooling is not None:
        parts.append(f"pooling={pooling}")
    for part in (*parts, prompt, text):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def spec_key(spec: ModelSpec, prompt: str, text: str) -> str:
    """:func:`cache_key` for a model spec."""
    numerics = "" if spec.is_reference_numerics else spec.numerics
    return cache_key(
        spec.model_id,
        spec.revision,
        prompt,
        text,
        normalize=spec.normalize,
        numerics=numerics,
        pooling=spec.pooling,
    )


class EmbeddingCache:
    """Vectors by key on disk. Thread-safe; several processes may share one folder."""

    def __init__(self, directory: str | Path | None = None, *, timeout_s: float = 60.0) -> None:
        self.directory = Path(directory) if directory is not None else default_embedding_cache_dir()
        self.path = self.directory / CACHE_FILE
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
                raise EmbeddingError(
                    f"embedding cache {self.path} has schema version {version}, expected {_SCHEMA_VERSION}; "
                    "delete the file to start a fresh cache"
                )
            if version != _SCHEMA_VERSION:  # a new file: create the table (only then do we write)
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors ("
                    " key BLOB PRIMARY KEY, dims INTEGER NOT NULL, vec BLOB NOT NULL) WITHOUT ROWID"
                )
                self._conn.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
                self._conn.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            raise EmbeddingError(f"cannot open the embedding cache at {self.path}") from exc

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (hex strings); absent keys are simply missing."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        try:
            with self._lock:
                for start in range(0, len(wanted), _CHUNK):
                    chunk = [bytes.fromhex(k) for k in wanted[start : start + _CHUNK]]
                    marks = ",".join("?" * len(chunk))
                    rows = self._conn.execute(
                        f"SELECT key, dims, vec FROM vectors WHERE key IN ({marks})", chunk
                    ).fetchall()
                    for key, dims, blob in rows:
                        vector = np.frombuffer(blob, dtype="<f4")
                        if vector.shape != (dims,):
                            continue  # a damaged row counts as a miss and is rewritten
                        found[key.hex()] = vector.astype(np.float32, copy=True)
        except sqlite3.Error as exc:
            raise EmbeddingError(f"cannot read the embedding cache at {self.path}") from exc
        self.hits += len(found)
        self.misses += len(wanted) - len(found)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> int:
        """Store vectors in one transaction; returns how many were given. Existing keys are kept."""
        rows = []
        for key, vector in items:
            array = np.asarray(vector, dtype="<f4")
            if array.ndim != 1:
                raise EmbeddingError(
                    f"cache entries must be 1-d vectors, found shape {array.shape} for {key}"
                )
            rows.append((bytes.fromhex(key), int(array.shape[0]), array.tobytes()))
        if not rows:
            return 0
        try:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    self._conn.executemany(
                        "INSERT INTO vectors (key, dims, vec) VALUES (?, ?, ?) "
                        "ON CONFLICT(key) DO UPDATE SET dims = excluded.dims, vec = excluded.vec "
                        "WHERE length(vectors.vec) != vectors.dims * 4",
                        rows,
                    )
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise EmbeddingError(f"cannot write to the embedding cache at {self.path}") from exc
        return len(rows)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM vectors WHERE key = ?", (bytes.fromhex(key),)).fetchone()
        return row is not None

    def keys(self) -> Iterator[str]:
        with self._lock:
            rows = self._conn.execute("SELECT key FROM vectors").fetchall()
        return (row[0].hex() for row in rows)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
