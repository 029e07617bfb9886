from __future__ import annotations

from typing import Any, ClassVar

from harness._errors import RunError
from harness.strategies._base import QueryInput, RetrievalStrategy
from harness.strategies._template import builtin_body
from indexer import KnnSpec


class Vector(RetrievalStrategy):
    """Approximate kNN over the model's vector field (k = depth, num_candidates >= 10 x k), in the
    engine's dialect (Elasticsearch's top-level ``knn``, OpenSearch's ``knn`` query clause)."""

    needs_vector: ClassVar[bool] = True

    def knn(self, query: QueryInput) -> KnnSpec:
        if query.vector is None or self.ctx.vector_field is None:
            raise RunError(f"query {query.qid}: the vector arm needs a query vector and a vector field")
        return KnnSpec(
            field=self.ctx.vector_field,
            vector=query.vector,
            k=self.ctx.depth,
            num_candidates=max(self.ctx.candidates, self.ctx.depth),
        )

    def body(self, query: QueryInput) -> dict[str, Any]:
        """The packaged kNN template of the engine's dialect, rendered as any template arm's is."""
        self.knn(query)  # a query vector and a vector field, or a clear error
        return builtin_body("vector", self.ctx, query, {}, self.ctx.require_dialect("the vector arm"))
