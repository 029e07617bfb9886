"""In-engine hybrid arms: one request per query fuses BM25 and kNN inside the engine.

``EngineSum`` (``hybrid-engine-sum``) runs on both engines: a weighted sum of the BM25
score and the kNN score (Elasticsearch: ``query`` + ``knn``, each boosted; OpenSearch:
``bool.should`` of both, the lexical boost rescaled so that BM25 counts in the same
units on both engines). The others are probe-gated: Elasticsearch's ``rrf`` and
``linear`` retrievers, OpenSearch's neural-search ``hybrid`` query; each is skipped
with a notice where the cluster lacks it. The backend writes every body (its dialect).
"""

from __future__ import annotations

from typing import Any, ClassVar

from harness._errors import RunError
from harness.strategies._base import QueryInput, RetrievalStrategy, SearchContext
from harness.strategies._lexical import Lexical
from harness.strategies._vector import Vector
from indexer import APPROXIMATE_KNN, BM25_PARAMS, HYBRID_QUERY, LINEAR_RETRIEVER, RRF_RETRIEVER, FusionParams


class _EngineHybrid(RetrievalStrategy):
    needs_vector: ClassVar[bool] = True

    def __init__(self, ctx: SearchContext) -> None:
        super().__init__(ctx)
        self.lexical = Lexical(ctx)
        self.vector = Vector(ctx)


class EngineSum(_EngineHybrid):
    """``lexical_weight`` x BM25 + ``vector_weight`` x kNN similarity, summed by the engine (it needs approximate
    kNN inside the search: an exact script_score would add a vector score to every document)."""

    needs_weights: ClassVar[bool] = True
    needs_capability: ClassVar[str | None] = APPROXIMATE_KNN

    def body(self, query: QueryInput) -> dict[str, Any]:
        if self.ctx.sum_weights is None:
            raise RunError(
                "the in-engine weighted sum needs its weights (--fusion wsum:weights=a/b or --tune-on)"
            )
        lexical_weight, vector_weight = self.ctx.sum_weights
        dialect = self.ctx.require_dialect("the in-engine weighted sum")
        return {
            **self._common(),
            **dialect.weighted_sum(
                self.lexical.query(query.text),
                self.vector.knn(query),
                lexical_weight=lexical_weight,
                vector_weight=vector_weight,
                bm25_k1=BM25_PARAMS[self.ctx.bm25][0],
            ),
        }


class _EngineFusion(_EngineHybrid):
    """An engine-side fusion kind (``indexer.FUSION_KINDS``) over the lexical query and the kNN search."""

    kind: ClassVar[str]

    def body(self, query: QueryInput) -> dict[str, Any]:
        params = FusionParams(
            window=self.ctx.depth,
            rank_constant=self.ctx.rrf_rank_constant,
            technique=self.ctx.hybrid_technique,
        )
        dialect = self.ctx.require_dialect(f"the engine's {self.kind} fusion")
        return {
            **self._common(),
            **dialect.fusion_search(
                self.kind, self.lexical.query(query.text), self.vector.knn(query), params
            ),
        }


class EngineRRF(_EngineFusion):
    """Elasticsearch's ``rrf`` retriever."""

    kind: ClassVar[str] = "rrf"
    needs_capability: ClassVar[str | None] = RRF_RETRIEVER


class EngineLinear(_EngineFusion):
    """Elasticsearch's ``linear`` retriever (min-max normalised, equal weights)."""

    kind: ClassVar[str] = "linear"
    needs_capability: ClassVar[str | None] = LINEAR_RETRIEVER


class EngineHybridQuery(_EngineFusion):
    """OpenSearch's neural-search ``hybrid`` query, normalised and combined by a search pipeline: the arm's
    named one, else the index's default, else the harness's own for ``search.hybrid_technique``."""

    kind: ClassVar[str] = "hybrid_query"
    needs_capability: ClassVar[str | None] = HYBRID_QUERY
