from __future__ import annotations

from typing import Any

from harness.strategies._base import QueryInput, RetrievalStrategy
from harness.strategies._template import builtin_body
from indexer import BM25_FIELDS

#: how title and text are searched (--lexical-field) -> the packaged templates that write it
#: (harness/resources/templates/arms/): (where the index has our combined copy_to field, where it has none).
#: A user mapping has no copy_to field of ours, so there "combined" searches both fields side by side.
LEXICAL_FIELDS: dict[str, tuple[str, str]] = {
    "combined": ("lexical", "lexical_multi_match"),
    "multi_match": ("lexical_multi_match", "lexical_multi_match"),
    # BEIR's Elasticsearch query (beir/retrieval/search/lexical/elastic_search.py): best_fields, tie_breaker 0.5
    "beir": ("lexical_beir", "lexical_beir"),
}


class Lexical(RetrievalStrategy):
    """BM25 over title and text, with Elasticsearch's or R2MED's parameters (chosen by field suffix).

    The body is the packaged template of ``ctx.lexical_field`` rendered as any template arm's is, with
    the fields of ``ctx.text_fields``; ``ctx.bm25`` and ``ctx.lexical_field`` are validated by the run's config.
    """

    def body(self, query: QueryInput) -> dict[str, Any]:
        fields = self.ctx.text_fields.suffixed(BM25_FIELDS[self.ctx.bm25])
        with_combined, without = LEXICAL_FIELDS[self.ctx.lexical_field]
        template = with_combined if fields.combined else without
        params = {"combined_field": fields.combined or "", "fields": fields.separate}
        return builtin_body(template, self.ctx, query, params, self.ctx.dialect)

    def query(self, text: str) -> dict[str, Any]:
        """The query clause alone (for the in-engine hybrids, which combine it with a kNN search)."""
        clause: dict[str, Any] = self.body(QueryInput("", text))["query"]
        return clause
