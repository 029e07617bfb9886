"""Vectors shipped with the package: the bundled SciFact sample's documents under the default model.

Every machine would compute the same vectors for the sample (the same abstracts, the pinned bundled
model, fp32), so they ship with the package (``indexer/data/resources/scifact/vectors/``: a manifest and
the rows, in corpus order) and ``scripts/build-sample-vectors`` rebuilds them. They stand in for
embedding only where all of this holds:

* the corpus is the one they were made for (its fingerprint), so a user's own data never meets them;
* the model is theirs (id, revision, document prompt, normalisation, pooling) and the run computes fp32
  (another runtime's fp32 is the same numerics up to rounding; a lower precision is not);
* the check at first use passes: :data:`CHECK_DOCS` documents of the manifest, re-embedded with the run's
  own numerics, reach a cosine of :data:`BUNDLE_COSINE_FLOOR` with the shipped rows. Otherwise the documents
  are embedded, with one line saying why.

``--embed-backend auto`` decides nothing where they cover every corpus to embed: it takes their numerics
(torch fp32, the reference), as nothing is left to compute but queries (:func:`adopt_bundled`). Vectors
that stand in for embedding never enter the embedding cache, whose keys keep numerics apart.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from base import EmbeddingError
from indexer.embed._embedder import CachedEmbedder, document_text
from indexer.embed._encoder import Encoder
from indexer.embed._models import ModelSpec
from indexer.embed._protocol import TextEncoder

#: the least cosine every re-embedded check document must reach with its shipped row (fp32 on any runtime:
#: 1.00000 measured for torch and openvino; bf16 reaches 0.99997, so precision is a rule of its own)
BUNDLE_COSINE_FLOOR = 0.9999
#: how many documents the check re-embeds (fixed in the manifest: the first, the longest, and spread out)
CHECK_DOCS = 8
MANIFEST_VERSION = 1
#: where bundled corpora keep their vectors: ``<resources>/<corpus>/vectors/<model>.json``
VECTORS_FOLDER = "vectors"


@dataclass(frozen=True, slots=True)
class BundleCheck:
    """The check at first use: the least cosine of the re-embedded documents with their shipped rows."""

    numerics: str
    min_cosine: float
    docs: int

    @property
    def passed(self) -> bool:
        return self.min_cosine >= BUNDLE_COSINE_FLOOR

    def line(self, what: str) -> str:
        """What the manifest and the first line of progress say about the vectors used."""
        if self.passed:
            return f"bundled for {what}, verified"
        return (
            f"embedded: the vectors bundled for {what} failed the check (min cosine {self.min_cosine:.5f} "
            f"< {BUNDLE_COSINE_FLOOR} with {self.numerics} on {self.docs} documents)"
        )


@dataclass(frozen=True, slots=True)
class BundledVectors:
    """One shipped set of vectors: its manifest (what they are, for which corpus and model) and its rows."""

    manifest: dict[str, Any]
    rows: Traversable  # the vectors file, next to the manifest

    @property
    def what(self) -> str:
        """The corpus as lines name it (``the sample``)."""
        return str(self.manifest["what"])

    @property
    def corpus(self) -> str:
        return str(self.manifest["corpus_fingerprint"])

    @property
    def backend(self) -> str:
        return str(self.manifest["numerics"]["backend"])

    @property
    def precision(self) -> str:
        return str(self.manifest["numerics"]["precision"])

    @property
    def numerics(self) -> str:
        return f"{self.backend}/{self.precision}"

    @property
    def ids(self) -> list[str]:
        return list(self.manifest["ids"])

    def same_model(self, spec: ModelSpec) -> bool:
        """Whether ``spec`` names the weights, prompt, normalisation and pooling these were made with."""
        return model_identity(spec) == self.manifest["model"]

    def serves(self, spec: ModelSpec) -> bool:
        """Whether these can stand in for ``spec``'s document vectors: its model, at their precision."""
        return self.same_model(spec) and spec.precision == self.precision

    def vectors(self) -> np.ndarray:
        """Every row, float32, in the manifest's id order (read once per process)."""
        return _load(self)[0]

    def lookup(self, ids: Sequence[str]) -> np.ndarray:
        """The rows of ``ids`` (every id must be the corpus's)."""
        rows, where = _load(self)
        try:
            return rows[[where[i] for i in ids]]
        except KeyError as exc:
            raise EmbeddingError(
                f"document {exc.args[0]!r} has no vector bundled for {self.what}: expected the corpus of "
                f"fingerprint {self.corpus}"
            ) from None

    def verify(self, encoder: TextEncoder) -> BundleCheck:
        """Re-embed the manifest's check documents with ``encoder`` (the run's numerics) and compare."""
        check = self.manifest["check"]
        got = encoder.encode(check["texts"], prompt=encoder.spec.document_prompt)
        want = self.lookup(check["ids"])
        cosine = float((got * want).sum(axis=1).min()) if len(got) else 0.0
        return BundleCheck(encoder.spec.numerics, round(cosine, 6), len(got))


def model_identity(spec: ModelSpec) -> dict[str, Any]:
    """What of a spec the document vectors depend on, numerics aside."""
    return {
        "id": spec.model_id,
        "revision": spec.revision,
        "document_prompt": spec.document_prompt,
        "normalize": spec.normalize,
        "pooling": spec.pooling,
    }


def _manifests() -> Iterator[tuple[Traversable, Traversable]]:
    """(folder, manifest) of every shipped set: ``indexer/data/resources/<corpus>/vectors/*.json``."""
    root = resources.files("indexer.data").joinpath("resources")
    for corpus in sorted(root.iterdir(), key=lambda t: t.name):
        folder = corpus.joinpath(VECTORS_FOLDER)
        if folder.is_dir():
            for manifest in sorted(folder.iterdir(), key=lambda t: t.name):
                if manifest.name.endswith(".json"):
                    yield folder, manifest


@cache
def shipped() -> tuple[BundledVectors, ...]:
    """Every set of vectors the package ships."""
    found = []
    for folder, manifest in _manifests():
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data.get("version") == MANIFEST_VERSION:  # a manifest of another layout is never read as this one
            found.append(BundledVectors(data, folder.joinpath(data["file"])))
    return tuple(found)


def bundled_vectors(spec: ModelSpec, corpus: str) -> BundledVectors | None:
    """The shipped vectors of corpus fingerprint ``corpus`` under ``spec``'s model, or None (numerics aside:
    :meth:`BundledVectors.serves` says whether they stand in for the run's)."""
    return next((b for b in shipped() if b.corpus == corpus and b.same_model(spec)), None)


def bundle_for(spec: ModelSpec, corpus: str) -> tuple[BundledVectors | None, str]:
    """(the shipped vectors that may stand in for ``spec``'s on corpus ``corpus``, still to be checked; else
    None and why not, in a line, or ``""`` where nothing was shipped for that corpus)."""
    for_corpus = [b for b in shipped() if b.corpus == corpus]
    if not for_corpus:
        return None, ""
    same = next((b for b in for_corpus if b.same_model(spec)), None)
    if same is None:
        theirs = for_corpus[0].manifest["model"]
        return None, (
            f"embedded: the vectors bundled for {for_corpus[0].what} are {theirs['id']}@{theirs['revision']}'s, "
            f"not {spec.model_id}@{spec.revision}'s"
            + ("" if theirs["document_prompt"] == spec.document_prompt else " (or another document prompt)")
        )
    if spec.precision != same.precision:
        return None, (
            f"embedded with {spec.numerics}: the vectors bundled for {same.what} are {same.precision}, "
            f"and only {same.precision} numerics may stand in for them"
        )
    return same, ""


def shipped_rows(spec: ModelSpec, corpus: str) -> tuple[list[str], np.ndarray] | None:
    """The vectors shipped for ``corpus`` that serve ``spec`` (ids, float32 rows), or None: what an index
    whose ``_meta`` records them as bundled holds (exact search over them is its ground truth)."""
    bundle, _ = bundle_for(spec, corpus)
    return (bundle.ids, bundle.vectors()) if bundle is not None else None


def adopt_bundled(embedders: Iterable[CachedEmbedder], corpora: Sequence[str]) -> None:
    """``auto``, where shipped vectors cover every corpus an undecided encoder would embed: their numerics,
    with no check (nothing but queries is left to compute). Called before anything reads the numerics."""
    if not corpora:
        return
    for emb in embedders:
        encoder = emb.encoder
        if not isinstance(encoder, Encoder) or encoder.decided:
            continue
        found = [bundled_vectors(encoder.base_spec, corpus) for corpus in corpora]
        first = found[0]
        if first is None or any(b is None or b.numerics != first.numerics for b in found):
            continue
        names = " and ".join(dict.fromkeys(b.what for b in found if b is not None))
        reason = (
            f"the vectors bundled for {names} are {first.numerics}: nothing but queries to embed, so no "
            "check ran"
        )
        encoder.adopt(first.backend, first.precision, reason)


#: rows and positions by the file's SHA-256, read once per process
_LOADED: dict[str, tuple[np.ndarray, dict[str, int]]] = {}


def _load(bundle: BundledVectors) -> tuple[np.ndarray, dict[str, int]]:
    manifest, rows = bundle.manifest, bundle.rows
    sha256 = str(manifest["sha256"])
    if sha256 not in _LOADED:
        raw = rows.read_bytes()
        if hashlib.sha256(raw).hexdigest() != sha256:
            raise EmbeddingError(
                f"{rows.name}: the bundled vectors do not match their manifest (SHA-256); reinstall the "
                "package or rebuild them with scripts/build-sample-vectors"
            )
        data = gzip.decompress(raw) if rows.name.endswith(".gz") else raw
        array = np.load(io.BytesIO(data), allow_pickle=False)
        ids = manifest["ids"]
        if array.shape != (len(ids), manifest["dims"]):
            raise EmbeddingError(
                f"{rows.name}: expected {len(ids)} rows of {manifest['dims']} values, found shape {array.shape}"
            )
        _LOADED[sha256] = (np.asarray(array, dtype=np.float32), {d: i for i, d in enumerate(ids)})
    return _LOADED[sha256]


def check_ids(lengths: Sequence[tuple[str, int]], n: int = CHECK_DOCS) -> list[str]:
    """The documents the check re-embeds: the first, the longest, the shortest, and the rest spread evenly."""
    ids = [doc_id for doc_id, _ in lengths]
    picked = [ids[0], max(lengths, key=lambda p: p[1])[0], min(lengths, key=lambda p: p[1])[0]]
    step = max(1, len(ids) // n)
    for doc_id in ids[step::step]:
        if len(dict.fromkeys(picked)) >= n:
            break
        picked.append(doc_id)
    return list(dict.fromkeys(picked))[:n]


def build_bundle(
    docs: Iterable[tuple[str, str, str]],
    embedder: CachedEmbedder,
    *,
    what: str,
    corpus: str,
    out: Path,
    dtype: str = "float32",
    window: int = 1024,
) -> Path:
    """Embed ``docs`` (id, title, text) as the index builder does (windows of ``window``, sorted batches) and
    write ``<out>/<model>.npy.gz`` and its manifest; returns the manifest's path."""
    spec = embedder.spec
    ids: list[str] = []
    texts: dict[str, str] = {}
    parts: list[np.ndarray] = []
    pending: list[tuple[str, str]] = []

    def flush() -> None:
        for batch_ids, vectors in embedder.embed_documents(pending):
            ids.extend(batch_ids)
            parts.append(vectors)
        pending.clear()

    for doc_id, title, text in docs:
        body = document_text(title, text)
        texts[doc_id] = body
        pending.append((doc_id, body))
        if len(pending) == window:
            flush()
    flush()
    matrix = np.concatenate(parts).astype(dtype)
    stem = spec.field_name.removeprefix("vec_").replace("_", "-")
    buffer = io.BytesIO()
    np.save(buffer, matrix, allow_pickle=False)
    raw = gzip.compress(buffer.getvalue(), compresslevel=9, mtime=0)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.npy.gz").write_bytes(raw)
    chosen = check_ids([(i, len(texts[i])) for i in ids])
    manifest = {
        "version": MANIFEST_VERSION,
        "what": what,
        "corpus_fingerprint": corpus,
        "model": model_identity(spec),
        "numerics": {"backend": spec.backend, "precision": spec.precision},
        "dims": int(matrix.shape[1]),
        "dtype": dtype,
        "file": f"{stem}.npy.gz",
        "sha256": hashlib.sha256(raw).hexdigest(),
        "built": {
            "date": datetime.now(UTC).date().isoformat(),
            "with": {p: _version(p) for p in ("torch", "sentence-transformers", "transformers")},
            "command": "scripts/build-sample-vectors",
        },
        "check": {"ids": chosen, "texts": [texts[i] for i in chosen], "floor": BUNDLE_COSINE_FLOOR},
        "ids": ids,
    }
    path = out / f"{stem}.json"
    path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    shipped.cache_clear()
    return path


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""
