from __future__ import annotations

from typing import Any, ClassVar

from harness.strategies._base import QueryInput, RetrievalStrategy
from indexer import ConfigError
from indexer._layout import BM25_FIELDS

#: how title and text are searched: one copy_to field, or multi_match over both
LEXICAL_FIELDS: tuple[str, ...] = ("combined", "multi_match")


class Lexical(RetrievalStrategy):
    """BM25 over title and text, with Elasticsearch's or R2MED's parameters (chosen by field)."""

    kind: ClassVar[str] = "lexical"

    def query(self, text: str) -> dict[str, Any]:
        suffix = BM25_FIELDS.get(self.ctx.bm25)
        if suffix is None:
            raise ConfigError(
                f"expected a BM25 parameterisation in {sorted(BM25_FIELDS)}, found {self.ctx.bm25!r}"
            )
        if self.ctx.lexical_field == "combined":
            return {"match": {f"title_text{suffix}": {"query": text}}}
        if self.ctx.lexical_field == "multi_match":
            return {
                "multi_match": {
                    "query": text,
                    "fields": [f"title{suffix}", f"text{suffix}"],
                    "type": "best_fields",
                }
            }
        raise ConfigError(
            f"expected a lexical field mode in {list(LEXICAL_FIELDS)}, found {self.ctx.lexical_field!r}"
        )

    def body(self, query: QueryInput) -> dict[str, Any]:
        return {**self._common(), "query": self.query(query.text)}
