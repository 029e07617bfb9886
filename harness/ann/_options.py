"""``SweepOptions``: what ``--ann-sweep`` covers, validated once and resolved against the probe."""

from __future__ import annotations

from dataclasses import dataclass

from base import CapabilityMissing
from harness.results import SweepSettings
from indexer import Capabilities

DEFAULT_CANDIDATES: tuple[int, ...] = (10, 20, 50, 100, 200, 500)
#: swept by default where the probe finds them: the HNSW family and the exact reference
DEFAULT_TYPES: tuple[str, ...] = ("hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw", "flat")
#: what the candidate count is called on each engine (OpenSearch's knn query takes ef_search)
PARAMETERS: dict[str, str] = {"elasticsearch": "num_candidates", "opensearch": "ef_search"}


def is_exact(index_type: str) -> bool:
    """Flat index types search every vector (brute force): no candidate parameter to sweep."""
    return index_type.endswith("flat")


@dataclass(frozen=True, slots=True)
class SweepOptions:
    index_types: tuple[str, ...] | None = None  # None: DEFAULT_TYPES, those the probe finds
    candidates: tuple[int, ...] = DEFAULT_CANDIDATES
    k: int = 10
    m: int = 16
    ef_construction: int = 100

    def resolve(self, caps: Capabilities) -> SweepSettings:
        """The settings this engine can run: asked types must all be there; default ones where found."""
        offered = caps.vector_index_types
        if self.index_types is not None:
            missing = [t for t in self.index_types if t not in offered]
            if missing:
                raise CapabilityMissing(
                    f"{caps.flavour} {caps.version} has no vector index type {', '.join(missing)} "
                    f"(the probe found {', '.join(offered) or 'none'})"
                )
            types = self.index_types
        else:
            types = tuple(t for t in DEFAULT_TYPES if t in offered)
        if not types:
            raise CapabilityMissing(f"{caps.flavour} {caps.version} offers no vector index type to sweep")
        return SweepSettings(
            index_types=types,
            candidates=tuple(sorted(set(self.candidates))),
            k=self.k,
            m=self.m,
            ef_construction=self.ef_construction,
            parameter=PARAMETERS.get(caps.flavour, "num_candidates"),
        )
