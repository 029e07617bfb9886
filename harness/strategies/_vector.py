from __future__ import annotations

from typing import Any, ClassVar

from harness._errors import RunError
from harness.strategies._base import QueryInput, RetrievalStrategy


class Vector(RetrievalStrategy):
    """Approximate kNN over the model's dense_vector field (k = depth, num_candidates ≥ 10 × k)."""

    needs_vector: ClassVar[bool] = True

    def knn(self, query: QueryInput) -> dict[str, Any]:
        if query.vector is None or self.ctx.vector_field is None:
            raise RunError(f"query {query.qid}: the vector arm needs a query vector and a vector field")
        return {
            "field": self.ctx.vector_field,
            "query_vector": list(query.vector),
            "k": self.ctx.depth,
            "num_candidates": max(self.ctx.candidates, self.ctx.depth),
        }

    def body(self, query: QueryInput) -> dict[str, Any]:
        return {**self._common(), "knn": self.knn(query)}
