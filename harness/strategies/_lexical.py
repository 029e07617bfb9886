from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.strategies._base import QueryInput, RetrievalStrategy
from indexer import BM25_FIELDS

LexicalQuery = Callable[[str, str], dict[str, Any]]

#: how title and text are searched (by field suffix, i.e. BM25 parameters): one copy_to field, or both
LEXICAL_FIELDS: dict[str, LexicalQuery] = {
    "combined": lambda text, suffix: {"match": {f"title_text{suffix}": {"query": text}}},
    "multi_match": lambda text, suffix: {
        "multi_match": {"query": text, "fields": [f"title{suffix}", f"text{suffix}"], "type": "best_fields"}
    },
    # BEIR's Elasticsearch query (beir/retrieval/search/lexical/elastic_search.py): best_fields, tie_breaker 0.5
    "beir": lambda text, suffix: {
        "multi_match": {
            "query": text,
            "fields": [f"title{suffix}", f"text{suffix}"],
            "type": "best_fields",
            "tie_breaker": 0.5,
        }
    },
}


class Lexical(RetrievalStrategy):
    """BM25 over title and text, with Elasticsearch's or R2MED's parameters (chosen by field).

    ``ctx.bm25`` and ``ctx.lexical_field`` are validated by the run's config.
    """

    def query(self, text: str) -> dict[str, Any]:
        return LEXICAL_FIELDS[self.ctx.lexical_field](text, BM25_FIELDS[self.ctx.bm25])

    def body(self, query: QueryInput) -> dict[str, Any]:
        return {**self._common(), "query": self.query(query.text)}
