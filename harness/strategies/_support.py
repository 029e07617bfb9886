"""Whether an arm runs on a cluster, and how: read from the probe's capabilities (declared per version).

The run's notices and the compatibility table of docs/engines.md both come from :func:`arm_support`, so
what the docs say an arm does on a version is what a run on that version does.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.strategies._arms import Arm
from indexer import APPROXIMATE_KNN, KNN, Capabilities

RUNS = "runs"
EXACT = "exact"
SKIPPED = "skipped"
FAILS = "fails"


@dataclass(frozen=True, slots=True)
class ArmSupport:
    """``runs`` (as asked), ``exact`` (kNN served exactly, by script_score), ``skipped`` (a probe-gated arm the
    cluster lacks: a notice, the run goes on) or ``fails`` (it needs vectors the cluster cannot search)."""

    how: str
    why: str = ""

    @property
    def runs(self) -> bool:
        return self.how in (RUNS, EXACT)

    @property
    def skipped(self) -> bool:
        return self.how == SKIPPED

    @property
    def exact(self) -> bool:
        return self.how == EXACT


def arm_support(arm: Arm, caps: Capabilities) -> ArmSupport:
    needed = arm.needs_capability
    if needed is not None and not caps.has(needed):
        return ArmSupport(SKIPPED, caps.missing.get(needed, f"the cluster lacks {needed}"))
    if not getattr(arm, "needs_vector", False) and not _fused_on_vectors(arm):
        return ArmSupport(RUNS)
    if not caps.has(KNN):
        return ArmSupport(FAILS, caps.missing.get(KNN, "the cluster has no kNN"))
    if not caps.has(APPROXIMATE_KNN):
        return ArmSupport(
            EXACT,
            f"{caps.missing.get(APPROXIMATE_KNN, 'no approximate kNN')}: its kNN is exact, a script_score over "
            "every document's vector",
        )
    return ArmSupport(RUNS)


def _fused_on_vectors(arm: Arm) -> bool:
    """A fused arm of the built-in modes runs where its inputs do (the vector arm decides for it)."""
    return "vector" in getattr(arm, "inputs", ())
