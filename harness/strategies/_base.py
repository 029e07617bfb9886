from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class QueryInput:
    """What a strategy needs for one query: the (possibly expanded) text and its vector."""

    qid: str
    text: str
    vector: tuple[float, ...] | None = None


@dataclass(frozen=True, slots=True)
class SearchContext:
    """Settings shared by every strategy of a run."""

    depth: int = 100
    bm25: str = "es"  # "es" (k1=1.2, b=0.75) or "r2med" (k1=0.9, b=0.4)
    lexical_field: str = "combined"  # see LEXICAL_FIELDS
    vector_field: str | None = None
    num_candidates: int | None = None  # default max(10 * depth, 100)
    rrf_rank_constant: int = 60

    @property
    def candidates(self) -> int:
        return self.num_candidates or min(10_000, max(10 * self.depth, 100))


class RetrievalStrategy(ABC):
    """Builds one search body per query; the engine runs them in batched msearch requests."""

    needs_vector: ClassVar[bool] = False
    needs_capability: ClassVar[str | None] = None  # a retriever the engine must offer

    def __init__(self, ctx: SearchContext) -> None:
        self.ctx = ctx

    @abstractmethod
    def body(self, query: QueryInput) -> dict[str, Any]:
        """The search request body for one query (size, _source and sort included)."""

    def _common(self) -> dict[str, Any]:
        return {"size": self.ctx.depth, "_source": False, "track_total_hits": False}
