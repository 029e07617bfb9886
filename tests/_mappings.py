"""A production team's index-creation body for the ``--mapping`` tests (importable as ``tests._mappings``)."""

from __future__ import annotations

from typing import Any

from indexer import Backend, VectorSpec

#: where the team keeps the corpus
FIELDS = "title=headline,text=body,vector=emb"


def team_body(backend: Backend, *, dims: int = 384, k1: float = 0.9) -> dict[str, Any]:
    """Their field names (``headline``, ``body``, ``emb``), their analyzer (built-in tokenizer and filters
    only: the stripped Elasticsearch has no analysis-common) and their BM25; the vector field in the
    engine's own dialect (dense_vector / knn_vector), written by the backend."""
    text = {"type": "text", "analyzer": "plain_en", "similarity": "team_bm25"}
    return {
        "settings": {
            "index": {
                "number_of_shards": 1,
                "refresh_interval": "30s",  # theirs, kept once the load is over (it loads without refreshes)
                "similarity": {"team_bm25": {"type": "BM25", "k1": k1, "b": 0.5}},
                "analysis": {
                    "analyzer": {
                        "plain_en": {
                            "type": "custom",
                            "tokenizer": "standard",
                            "filter": ["lowercase", "stop"],
                        }
                    }
                },
            }
        },
        "mappings": {
            "_meta": {"team": "search-ops"},
            "properties": {
                "headline": text,
                "body": text,
                "emb": backend.vector_mapping(VectorSpec(dims)),
            },
        },
    }
