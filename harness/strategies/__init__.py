"""Retrieval strategies and the arms built from them: one module per strategy, one registration each.

``ARMS`` maps an arm name to its spec (a :class:`SearchArm` with the strategy that builds
its search bodies, or a :class:`FusedArm` fused on the client with ranx); ``MODES`` names
the arms each ``harness run`` mode runs. The runner reads what each arm needs (a query
vector, an engine capability, other arms) from these specs and decides nothing by name.
Adding an arm: a strategy module, and one line in ``ARMS`` (plus its mode).
"""

from harness.strategies._arms import Arm, FusedArm, RerankedArm, SearchArm
from harness.strategies._base import QueryInput, RetrievalStrategy, SearchContext, TextFields
from harness.strategies._engine_hybrid import EngineHybridQuery, EngineLinear, EngineRRF, EngineSum
from harness.strategies._lexical import LEXICAL_FIELDS, Lexical
from harness.strategies._support import ArmSupport, arm_support
from harness.strategies._template import ID_FIELD, TemplateArm, TemplateStrategy
from harness.strategies._vector import Vector

ARMS: dict[str, Arm] = {
    arm.name: arm
    for arm in (
        SearchArm("lexical", Lexical),
        SearchArm("vector", Vector, compare_to=("lexical",)),
        FusedArm("hybrid", ("lexical", "vector"), compare_to=("lexical", "vector")),
        SearchArm("hybrid-engine-sum", EngineSum, compare_to=("hybrid",)),
        SearchArm("hybrid-engine-rrf", EngineRRF, compare_to=("hybrid",)),
        SearchArm("hybrid-engine-linear", EngineLinear, compare_to=("hybrid",)),
        SearchArm("hybrid-engine-query", EngineHybridQuery, compare_to=("hybrid",)),
    )
}

#: the arms each mode runs, in report order (arms whose capability the engine lacks are skipped)
MODES: dict[str, tuple[str, ...]] = {
    "lexical": ("lexical",),
    "vector": ("vector",),
    "hybrid": (
        "lexical",
        "vector",
        "hybrid",
        "hybrid-engine-sum",
        "hybrid-engine-rrf",
        "hybrid-engine-linear",
        "hybrid-engine-query",
    ),
}

__all__ = [
    "ARMS",
    "ID_FIELD",
    "LEXICAL_FIELDS",
    "MODES",
    "Arm",
    "ArmSupport",
    "EngineHybridQuery",
    "EngineLinear",
    "EngineRRF",
    "EngineSum",
    "FusedArm",
    "Lexical",
    "QueryInput",
    "RerankedArm",
    "RetrievalStrategy",
    "SearchArm",
    "SearchContext",
    "TemplateArm",
    "TemplateStrategy",
    "TextFields",
    "Vector",
    "arm_support",
]
