"""Arm specs: what an arm is made of, and what it needs from the run and the engine.

A :class:`SearchArm` sends one search body per query (its strategy builds it); a
:class:`FusedArm` fuses the runs of other arms on the client with ranx. Each arm
declares the arms it is tested against (``compare_to``), so the paired tests of a
run follow from the arms it runs, not from a list kept elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.eval import FusionSpec
from harness.strategies._base import RetrievalStrategy
from harness.strategies._template import TemplateArm


@dataclass(frozen=True, slots=True)
class SearchArm:
    """An arm answered by the engine: one search per query, built by ``strategy``."""

    name: str
    strategy: type[RetrievalStrategy]
    compare_to: tuple[str, ...] = ()

    @property
    def needs_vector(self) -> bool:
        return self.strategy.needs_vector

    @property
    def needs_capability(self) -> str | None:
        return self.strategy.needs_capability

    @property
    def needs_weights(self) -> bool:
        return self.strategy.needs_weights


@dataclass(frozen=True, slots=True)
class FusedArm:
    """An arm fused on the client from the runs of ``inputs`` (with its own fusion spec, else the run's)."""

    name: str
    inputs: tuple[str, ...]
    compare_to: tuple[str, ...] = ()
    needs_capability: None = None
    fusion: FusionSpec | None = None


@dataclass(frozen=True, slots=True)
class RerankedArm:
    """An arm whose top-k of ``input`` is re-scored by the run's reranker (``--rerank``)."""

    name: str
    input: str
    needs_capability: None = None

    @property
    def compare_to(self) -> tuple[str, ...]:
        return (self.input,)


Arm = SearchArm | FusedArm | RerankedArm | TemplateArm
