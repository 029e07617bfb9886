from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from harness._errors import RunError
from indexer import QueryDialect


@dataclass(frozen=True, slots=True)
class QueryInput:
    """What a strategy needs for one query: the (possibly expanded) text and its vector."""

    qid: str
    text: str
    vector: tuple[float, ...] | None = None


@dataclass(frozen=True, slots=True)
class TextFields:
    """The fields the lexical arms search: the harness's own, or those a user mapping's field map names
    (no ``combined`` copy_to field there: title and text are searched side by side)."""

    text: str = "text"
    title: str | None = "title"
    combined: str | None = "title_text"

    def suffixed(self, suffix: str) -> TextFields:
        """The same fields with a BM25 sub-field suffix (``.r2med``); empty: unchanged."""
        return TextFields(
            self.text + suffix,
            self.title + suffix if self.title else None,
            self.combined + suffix if self.combined else None,
        )

    @property
    def separate(self) -> list[str]:
        """Title (when there is one) and text."""
        return [f for f in (self.title, self.text) if f]


@dataclass(frozen=True, slots=True)
class SearchContext:
    """Settings shared by every strategy of a run, and the engine's query dialect."""

    depth: int = 100
    bm25: str = "es"  # "es" (k1=1.2, b=0.75) or "r2med" (k1=0.9, b=0.4)
    lexical_field: str = "combined"  # see LEXICAL_FIELDS
    text_fields: TextFields = TextFields()  # where title and text are (a --mapping names its own)
    vector_field: str | None = None
    num_candidates: int | None = None  # default max(10 * depth, 100)
    rrf_rank_constant: int = 60
    #: how OpenSearch's hybrid query normalizes (min_max, l2, z_score) or fuses (rrf) in the harness's pipeline
    hybrid_technique: str = "min_max"
    #: how this engine writes kNN and engine-side fusion (the run's backend); lexical arms need none
    dialect: QueryDialect | None = None
    #: (lexical, vector) weights of the in-engine weighted sum, from --fusion or --tune-on
    sum_weights: tuple[float, float] | None = None

    @property
    def candidates(self) -> int:
        return self.num_candidates or min(10_000, max(10 * self.depth, 100))

    def require_dialect(self, what: str) -> QueryDialect:
        if self.dialect is None:
            raise RunError(f"{what} needs the engine's query dialect (a backend), found none")
        return self.dialect


class RetrievalStrategy(ABC):
    """Builds one search body per query; the engine runs them in batched msearch requests."""

    needs_vector: ClassVar[bool] = False  # a query vector, so the cluster's k-NN (a run fails without it)
    needs_capability: ClassVar[str | None] = (
        None  # a probe feature; the arm is skipped, with a notice, without it
    )
    needs_weights: ClassVar[bool] = False  # lexical/vector weights (ctx.sum_weights), fixed or tuned

    def __init__(self, ctx: SearchContext) -> None:
        self.ctx = ctx

    @abstractmethod
    def body(self, query: QueryInput) -> dict[str, Any]:
        """The search request body for one query (size, _source and sort included)."""

    def _common(self) -> dict[str, Any]:
        return {"size": self.ctx.depth, "_source": False, "track_total_hits": False}
