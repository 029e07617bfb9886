"""Configurations of a sweep, and the providers that offer them (a registry, one entry per kind).

A sweep runs over :class:`Configuration` s: one :class:`Choice` from each provider taking part,
applied in registry order to a set of runs ``{arm: {qid: {doc: score}}}``; what the
configuration produces is the run of the swept arm (``SweepContext.output``). The joint grid is
the product of the providers' choices.

Two providers exist: ``fusion`` (method x normalisation x weights x k, from a
:class:`~harness.sweep.SweepSpec`), whose choice fuses the context's input arms into the output
arm, and ``params`` (:mod:`harness.sweep._params`: template parameters, boosts,
``num_candidates``, fields), which registers itself at a lower stage: its choices select the
input arms' runs (searched once per setting) that the fusion choice then fuses, so a grid over
both needs no change to selection or scoring.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from base import ConfigError
from harness.eval import FusionSpec, Run, fuse, top_k
from harness.sweep._spec import SweepSpec

#: the fusion provider's stage: providers of input runs (template parameters) take lower ones
FUSION_STAGE = 100

RunSet = Mapping[str, Mapping[str, Mapping[str, float]]]


@dataclass(frozen=True, slots=True)
class SweepContext:
    """What the swept arm is made from: its input arms, its own name, and its depth."""

    inputs: tuple[str, ...]
    output: str
    depth: int


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of one provider: its label (for tables and the manifest) and the value itself."""

    provider: str
    label: str
    value: Any = field(compare=False)


class Provider(Protocol):
    """Offers the choices of one kind of parameter, and applies one of them to a set of runs.

    ``stage`` orders providers: lower stages apply first (what produces the input arms' runs comes
    before what combines them; fusion is :data:`FUSION_STAGE`).
    """

    stage: int

    def choices(self, spec: Any, ctx: SweepContext) -> Sequence[Choice]: ...

    def apply(self, value: Any, ctx: SweepContext, runs: RunSet) -> dict[str, Run]: ...


class FusionProvider:
    """Fusion method x normalisation x weights x k: each choice fuses the inputs into the output arm."""

    name = "fusion"
    stage = FUSION_STAGE

    def choices(self, spec: Any, ctx: SweepContext) -> Sequence[Choice]:
        if not isinstance(spec, SweepSpec):
            raise ConfigError(f"the fusion sweep expects a SweepSpec, found {type(spec).__name__}")
        return [Choice(self.name, str(f), f) for f in spec.configurations(len(ctx.inputs))]

    def apply(self, value: Any, ctx: SweepContext, runs: RunSet) -> dict[str, Run]:
        assert isinstance(value, FusionSpec)
        return {ctx.output: top_k(fuse({a: runs[a] for a in ctx.inputs}, value), ctx.depth)}


#: every provider of sweep choices, by name (applied in the order of their ``stage``)
PROVIDERS: dict[str, Provider] = {FusionProvider.name: FusionProvider()}


@dataclass(frozen=True, slots=True)
class Configuration:
    """One point of the joint grid: a choice per provider taking part, in registry order."""

    choices: tuple[Choice, ...]

    @property
    def label(self) -> str:
        return " ".join(
            c.label if c.provider == "fusion" else f"{c.provider}:{c.label}" for c in self.choices
        )

    @property
    def params(self) -> dict[str, str]:
        """``{provider: label}``: what the manifest records of the choice."""
        return {c.provider: c.label for c in self.choices}

    def value(self, provider: str) -> Any:
        return next((c.value for c in self.choices if c.provider == provider), None)

    def run(self, ctx: SweepContext, runs: RunSet) -> Run:
        """The swept arm's run under this configuration, from ``runs`` (the context's inputs)."""
        current: dict[str, Mapping[str, Mapping[str, float]]] = dict(runs)
        for choice in self.choices:
            current.update(PROVIDERS[choice.provider].apply(choice.value, ctx, current))
        return {q: dict(d) for q, d in current[ctx.output].items()}


def grid(specs: Mapping[str, Any], ctx: SweepContext) -> tuple[Configuration, ...]:
    """Every configuration of the joint grid of ``specs`` (``{provider: its spec}``), in grid order."""
    unknown = sorted(set(specs) - set(PROVIDERS))
    if unknown:
        raise ConfigError(f"unknown sweep provider {unknown[0]!r}; expected among {', '.join(PROVIDERS)}")
    order = sorted(specs, key=lambda name: (PROVIDERS[name].stage, name))
    axes = [PROVIDERS[name].choices(specs[name], ctx) for name in order]
    configs = tuple(Configuration(tuple(combo)) for combo in itertools.product(*axes))
    if not configs:
        raise ConfigError("the sweep grid is empty: expected at least one configuration")
    return configs
