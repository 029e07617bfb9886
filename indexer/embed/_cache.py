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
processes) read while one writes (the file handling is indexer's one :class:`~indexer.SqliteStore`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

import numpy as np

from base import EmbeddingError, SqliteStore, default_cache_dir
from indexer.embed._models import ModelSpec

CACHE_FILE = "vectors.sqlite3"


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


#: the table and its value columns (the schema of every embedding cache written so far)
TABLE, COLUMNS = "vectors", ("dims INTEGER NOT NULL", "vec BLOB NOT NULL")
#: a stored vector is only replaced when it is damaged (its bytes do not hold ``dims`` float32s)
DAMAGED = "length(vectors.vec) != vectors.dims * 4"


class EmbeddingCache:
    """Vectors by key on disk. Thread-safe; several processes may share one folder."""

    def __init__(self, directory: str | Path | None = None, *, timeout_s: float = 60.0) -> None:
        self.directory = Path(directory) if directory is not None else default_embedding_cache_dir()
        self.path = self.directory / CACHE_FILE
        self.hits = 0
        self.misses = 0
        self.store = SqliteStore(
            self.path, TABLE, COLUMNS, label="embedding cache", replace_when=DAMAGED, timeout_s=timeout_s
        )

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (hex strings); absent keys are simply missing."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        for key, (dims, blob) in self.store.get_many(wanted).items():
            if len(blob) == dims * 4:  # a damaged row counts as a miss and is rewritten
                found[key] = np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=True)
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
            rows.append((key, (int(array.shape[0]), array.tobytes())))
        return self.store.put_many(rows)

    def __len__(self) -> int:
        return len(self.store)

    def __contains__(self, key: object) -> bool:
        return key in self.store

    def keys(self) -> Iterator[str]:
        return self.store.keys()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
