"""Retrieval strategies: one module per arm, each building its own search body.

``STRATEGIES`` maps an arm kind to its class; the runner picks from it, never
with if/elif chains. Client-side fusion (the ``hybrid`` arm) is not a strategy:
it fuses the lexical and vector runs with ranx (see :mod:`harness.eval`).
"""

from harness.strategies._base import QueryInput, RetrievalStrategy, SearchContext
from harness.strategies._engine_hybrid import EngineLinear, EngineRRF
from harness.strategies._lexical import LEXICAL_FIELDS, Lexical
from harness.strategies._vector import Vector

STRATEGIES: dict[str, type[RetrievalStrategy]] = {
    "lexical": Lexical,
    "vector": Vector,
    "engine-rrf": EngineRRF,
    "engine-linear": EngineLinear,
}

__all__ = [
    "LEXICAL_FIELDS",
    "STRATEGIES",
    "EngineLinear",
    "EngineRRF",
    "Lexical",
    "QueryInput",
    "RetrievalStrategy",
    "SearchContext",
    "Vector",
]
