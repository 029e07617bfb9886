"""In-engine hybrid arms through the ``rrf`` / ``linear`` retrievers, where the engine offers them."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.strategies._base import QueryInput, RetrievalStrategy, SearchContext
from harness.strategies._lexical import Lexical
from harness.strategies._vector import Vector


class _EngineHybrid(RetrievalStrategy):
    needs_vector: ClassVar[bool] = True

    def __init__(self, ctx: SearchContext) -> None:
        super().__init__(ctx)
        self.lexical = Lexical(ctx)
        self.vector = Vector(ctx)

    def _retrievers(self, query: QueryInput) -> list[dict[str, Any]]:
        return [
            {"standard": {"query": self.lexical.query(query.text)}},
            {"knn": self.vector.knn(query)},
        ]


class EngineRRF(_EngineHybrid):
    needs_capability: ClassVar[str | None] = "rrf"

    def body(self, query: QueryInput) -> dict[str, Any]:
        return {
            **self._common(),
            "retriever": {
                "rrf": {
                    "retrievers": self._retrievers(query),
                    "rank_window_size": self.ctx.depth,
                    "rank_constant": self.ctx.rrf_rank_constant,
                }
            },
        }


class EngineLinear(_EngineHybrid):
    needs_capability: ClassVar[str | None] = "linear"

    def body(self, query: QueryInput) -> dict[str, Any]:
        return {
            **self._common(),
            "retriever": {
                "linear": {
                    "retrievers": [
                        {"retriever": r, "weight": 1.0, "normalizer": "minmax"}
                        for r in self._retrievers(query)
                    ],
                    "rank_window_size": self.ctx.depth,
                }
            },
        }
