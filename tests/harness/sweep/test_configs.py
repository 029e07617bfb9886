"""The joint grid: configurations from a registry of providers, each producing the swept arm's run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from base import ConfigError
from harness.eval import FusionSpec, Run, fuse, top_k
from harness.sweep import FUSION_STAGE, PROVIDERS, Choice, RunSet, SweepContext, SweepSpec, grid

RUNS = {
    "lexical": {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 5.0, "y": 4.0}},
    "vector": {"q1": {"c": 0.9, "a": 0.8, "d": 0.7}, "q2": {"y": 0.9, "z": 0.1}},
}
CTX = SweepContext(("lexical", "vector"), "hybrid", depth=10)


def test_each_fusion_configuration_runs_as_fuse_does() -> None:
    configs = grid({"fusion": SweepSpec.parse("method=rrf,wsum;weights=0.3,0.7")}, CTX)
    assert [c.label for c in configs] == [
        "rrf:k=60",
        "wsum:norm=min-max,weights=0.3/0.7",
        "wsum:norm=min-max,weights=0.7/0.3",
    ]
    for config in configs:
        spec = config.value("fusion")
        assert isinstance(spec, FusionSpec) and config.params == {"fusion": str(spec)}
        assert config.run(CTX, RUNS) == top_k(fuse(RUNS, spec), 10)


class BoostLexical:
    """A stand-in for a template-parameter provider: its choice re-scores the lexical arm's run."""

    name, stage = "boost", FUSION_STAGE - 10

    def choices(self, spec: Any, ctx: SweepContext) -> Sequence[Choice]:
        return [Choice(self.name, f"lexical*{b:g}", b) for b in spec]

    def apply(self, value: Any, ctx: SweepContext, runs: RunSet) -> dict[str, Run]:
        return {
            "lexical": {q: {d: s * value for d, s in docs.items()} for q, docs in runs["lexical"].items()}
        }


def test_another_provider_joins_the_grid_and_applies_before_fusion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROVIDERS, "boost", BoostLexical())
    fusion = SweepSpec.parse("method=combsum;norm=none")
    configs = grid({"fusion": fusion, "boost": (1.0, 10.0)}, CTX)
    assert [c.params for c in configs] == [
        {"boost": "lexical*1", "fusion": "combsum:norm=none"},
        {"boost": "lexical*10", "fusion": "combsum:norm=none"},
    ]
    boosted = {"lexical": {q: {d: s * 10 for d, s in docs.items()} for q, docs in RUNS["lexical"].items()}}
    spec = FusionSpec.parse("combsum:norm=none")
    assert configs[1].run(CTX, RUNS) == top_k(fuse({**RUNS, **boosted}, spec), 10)
    assert configs[0].run(CTX, RUNS) == top_k(fuse(RUNS, spec), 10) != configs[1].run(CTX, RUNS)


def test_an_unknown_provider_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unknown sweep provider 'boosts'; expected among fusion"):
        grid({"boosts": ()}, CTX)
