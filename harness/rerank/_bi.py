"""A bi-encoder reranker: exact similarity under an embedding model (vectors from the embedding cache)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from harness.rerank._base import check_texts
from indexer import CachedEmbedder


class BiEncoderReranker:
    """Re-scores with the dot product of unit vectors (cosine) of query and document under ``spec``."""

    kind = "bi"

    def __init__(self, embedder: CachedEmbedder) -> None:
        self.embedder = embedder

    @property
    def identity(self) -> dict[str, str]:
        spec = self.embedder.spec
        return {
            "kind": self.kind,
            "model": spec.model_id,
            "revision": spec.revision,
            "query_prompt": spec.query_prompt,
        }

    def score(
        self, queries: Mapping[str, str], candidates: Mapping[str, Sequence[str]], texts: Mapping[str, str]
    ) -> dict[str, dict[str, float]]:
        check_texts(candidates, texts)
        doc_ids = sorted({d for docs in candidates.values() for d in docs})
        vectors: dict[str, np.ndarray] = {}
        for ids, mat in self.embedder.embed_documents((d, texts[d]) for d in doc_ids):
            vectors.update(zip(ids, mat, strict=True))
        qids = list(candidates)
        qmat = self.embedder.embed_queries([queries[q] for q in qids])
        return {
            qid: {d: float(np.dot(qvec, vectors[d])) for d in candidates[qid]}
            for qid, qvec in zip(qids, qmat, strict=True)
        }
