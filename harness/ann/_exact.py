"""Exact nearest neighbours on the client, and recall of an approximate ranking against them.

The document vectors are the ones the index was built from (the embedding cache returns the
same float32 vectors the builder sent), so exact search over them is the ground truth an
HNSW graph approximates. Scores are dot products (the layout's similarity: unit vectors, so
cosine); recall counts ties: a returned document whose exact score equals the k-th
neighbour's (within ``TIE_EPS``) is a correct neighbour, as ann-benchmarks counts them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from base import timed
from harness.eval import rank
from harness.results import AnnRecall
from indexer import CachedEmbedder, Dataset, document_text, shipped_rows

#: float32 dot products from another summation order (the engine's) differ by ~1e-7
TIE_EPS = 1e-5
DOC_CHUNK = 65_536


@dataclass(frozen=True, slots=True)
class DocumentVectors:
    """Every document's vector, in corpus order, with an id -> row map."""

    ids: tuple[str, ...]
    matrix: np.ndarray  # float32 (documents, dims)

    @property
    def rows(self) -> dict[str, int]:
        return {doc: i for i, doc in enumerate(self.ids)}

    @property
    def sha256(self) -> str:
        h = hashlib.sha256()
        h.update("\n".join(self.ids).encode())
        h.update(np.ascontiguousarray(self.matrix, dtype=np.float32).tobytes())
        return h.hexdigest()


def document_vectors(embedder: CachedEmbedder, ds: Dataset, *, shipped: bool = False) -> DocumentVectors:
    """The dataset's document vectors: from the embedding cache (the text the builder embedded), or, where
    the index holds the vectors shipped for the corpus (``shipped``: its ``_meta`` says so), those."""
    found = shipped_rows(embedder.spec, ds.fingerprint.corpus) if shipped else None
    if found is not None:
        return DocumentVectors(tuple(found[0]), found[1])
    pairs = ((d.id, document_text(d.title, d.text)) for d in ds.iter_corpus())
    ids: list[str] = []
    blocks: list[np.ndarray] = []
    for chunk_ids, vectors in embedder.embed_documents(pairs, total=ds.corpus_size):
        ids += chunk_ids
        blocks.append(np.asarray(vectors, dtype=np.float32))
    matrix = np.concatenate(blocks) if blocks else np.zeros((0, 1), dtype=np.float32)
    return DocumentVectors(tuple(ids), matrix)


@dataclass(frozen=True, slots=True)
class ExactNeighbours:
    """The exact top ``k`` of every query: document rows and scores, best first."""

    rows: np.ndarray  # int (queries, k)
    scores: np.ndarray  # float32 (queries, k)

    @property
    def k(self) -> int:
        return int(self.rows.shape[1])


def exact_top_k(queries: np.ndarray, docs: np.ndarray, k: int) -> ExactNeighbours:
    """Brute force over ``docs`` in chunks (memory: queries x chunk), keeping a running top ``k``."""
    k = min(k, docs.shape[0])
    best_rows = np.zeros((queries.shape[0], 0), dtype=np.int64)
    best_scores = np.zeros((queries.shape[0], 0), dtype=np.float32)
    for start in range(0, docs.shape[0], DOC_CHUNK):
        scores = queries @ docs[start : start + DOC_CHUNK].T
        rows = np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)
        all_scores = np.concatenate([best_scores, scores], axis=1)
        all_rows = np.concatenate([best_rows, rows], axis=1)
        top = np.argpartition(-all_scores, k - 1, axis=1)[:, :k] if all_scores.shape[1] > k else None
        if top is not None:
            all_scores = np.take_along_axis(all_scores, top, axis=1)
            all_rows = np.take_along_axis(all_rows, top, axis=1)
        best_scores, best_rows = all_scores, all_rows
    order = np.argsort(-best_scores, axis=1, kind="stable")
    return ExactNeighbours(
        np.take_along_axis(best_rows, order, axis=1), np.take_along_axis(best_scores, order, axis=1)
    )


def recall_at(
    ranked: Sequence[str],
    query: np.ndarray,
    kth_score: float,
    docs: DocumentVectors,
    rows: Mapping[str, int],
    k: int,
) -> float:
    """Share of ``ranked[:k]`` that are true k nearest neighbours (ties with the k-th count)."""
    top = [rows[d] for d in ranked[:k] if d in rows]
    if not top:
        return 0.0
    scores = docs.matrix[top] @ query
    return float(np.sum(scores >= kth_score - TIE_EPS)) / k


@timed("ann recall")
def ann_recall(
    runs: Mapping[str, Mapping[str, float]],
    qids: Sequence[str],
    query_vectors: np.ndarray,
    docs: DocumentVectors,
    ks: Sequence[int],
) -> AnnRecall:
    """Recall@k of every query's ranking (``runs``: qid -> doc -> score) against exact search."""
    ks = sorted({min(k, len(docs.ids)) for k in ks})
    exact = exact_top_k(query_vectors, docs.matrix, max(ks))
    rows = docs.rows
    per_query: dict[str, dict[str, float]] = {f"recall@{k}": {} for k in ks}
    for i, qid in enumerate(qids):
        ranked = rank(runs.get(qid, {}), qid)
        ids = [d for d, _ in ranked]
        for k in ks:
            value = recall_at(ids, query_vectors[i], float(exact.scores[i, k - 1]), docs, rows, k)
            per_query[f"recall@{k}"][qid] = round(value, 6)
    means = {m: round(float(np.mean(list(v.values()))), 6) if v else 0.0 for m, v in per_query.items()}
    return AnnRecall(
        exact=f"client: numpy dot product over {len(docs.ids)} cached document vectors",
        recall=means,
        per_query=per_query,
    )
