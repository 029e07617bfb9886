from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.strategies._base import QueryInput, RetrievalStrategy, TextFields
from indexer import BM25_FIELDS

LexicalQuery = Callable[[str, TextFields], dict[str, Any]]


def _best_fields(text: str, fields: TextFields) -> dict[str, Any]:
    return {"multi_match": {"query": text, "fields": fields.separate, "type": "best_fields"}}


#: how title and text are searched (the fields already carry the BM25 suffix): one copy_to field, or
#: both; a user mapping has no copy_to field of ours, so there "combined" searches both side by side
LEXICAL_FIELDS: dict[str, LexicalQuery] = {
    "combined": lambda text, f: (
        {"match": {f.combined: {"query": text}}} if f.combined else _best_fields(text, f)
    ),
    "multi_match": _best_fields,
    # BEIR's Elasticsearch query (beir/retrieval/search/lexical/elastic_search.py): best_fields, tie_breaker 0.5
    "beir": lambda text, f: {
        "multi_match": {"query": text, "fields": f.separate, "type": "best_fields", "tie_breaker": 0.5}
    },
}


class Lexical(RetrievalStrategy):
    """BM25 over title and text, with Elasticsearch's or R2MED's parameters (chosen by field).

    ``ctx.bm25`` and ``ctx.lexical_field`` are validated by the run's config.
    """

    def query(self, text: str) -> dict[str, Any]:
        fields = self.ctx.text_fields.suffixed(BM25_FIELDS[self.ctx.bm25])
        return LEXICAL_FIELDS[self.ctx.lexical_field](text, fields)

    def body(self, query: QueryInput) -> dict[str, Any]:
        return {**self._common(), "query": self.query(query.text)}
