"""Template parameters as a sweep provider: each choice gives some arms other ``params``.

A :class:`ParamGrid` lists, per arm, the values each swept parameter takes (an experiment's
``[sweep.params]``: ``boosted.title_boost = [1, 2, 4]``, ``knn.num_candidates = [100, 400]``).
An arm's *settings* are the product of its own axes; a :class:`ParamPoint` (one choice of
this provider) is one setting per swept arm, and the provider's choices are their product.

A setting changes the search bodies, so its runs come from the engine: the caller searches
each arm once per distinct setting (:meth:`ParamGrid.settings`, :meth:`ParamGrid.searches`)
and hands those runs in under :func:`variant_key` names beside the arms' own runs. Applying a
point then only *selects*: each swept arm's run becomes its setting's run, for the queries of
the arm's run (so a fold's held-out queries stay the fold's). The fusion provider, a later
stage, fuses what this stage selected, and selection and scoring need no change.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from base import ConfigError
from harness.eval import Run
from harness.sweep._configs import PROVIDERS, Choice, RunSet, SweepContext
from harness.sweep._spec import SweepSpec

#: this provider's stage: its choices produce the input arms' runs that fusion then combines
PARAMS_STAGE = 10

#: one arm's parameter values: ((param, value), ...) in the grid's order
Setting = tuple[tuple[str, Any], ...]


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def variant_key(arm: str, setting: Setting) -> str:
    """The name of ``arm``'s run under ``setting`` in a run set: ``knn{num_candidates=100}``."""
    return f"{arm}{{{','.join(f'{p}={_text(v)}' for p, v in setting)}}}"


@dataclass(frozen=True, slots=True)
class ParamAxis:
    """One swept parameter of one arm, and the values it takes (non-empty, without repeats)."""

    arm: str
    param: str
    values: tuple[Any, ...]

    def __str__(self) -> str:
        return f"{self.arm}.{self.param}={','.join(_text(v) for v in self.values)}"


@dataclass(frozen=True, slots=True)
class ParamPoint:
    """One setting for each swept arm: one choice of the ``params`` provider."""

    settings: tuple[tuple[str, Setting], ...]

    @property
    def label(self) -> str:
        return ",".join(f"{arm}.{p}={_text(v)}" for arm, setting in self.settings for p, v in setting)

    def params_of(self, arm: str) -> dict[str, Any]:
        return dict(next((s for a, s in self.settings if a == arm), ()))


@dataclass(frozen=True, slots=True)
class ParamGrid:
    """Every swept parameter of every arm (see the module doc)."""

    axes: tuple[ParamAxis, ...]

    @property
    def arms(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.arm for a in self.axes))

    def settings(self, arm: str) -> tuple[Setting, ...]:
        """Every distinct setting of ``arm``: the product of its axes, in grid order."""
        axes = [a for a in self.axes if a.arm == arm]
        return tuple(
            tuple(zip([a.param for a in axes], combo, strict=True))
            for combo in itertools.product(*(a.values for a in axes))
        )

    def points(self) -> tuple[ParamPoint, ...]:
        arms = self.arms
        combos = itertools.product(*(self.settings(a) for a in arms))
        return tuple(ParamPoint(tuple(zip(arms, combo, strict=True))) for combo in combos)

    def searches(self, queries: int) -> int:
        """The searches the grid needs on ``queries`` queries: each arm's distinct settings, once each."""
        return sum(len(self.settings(a)) for a in self.arms) * queries

    def __str__(self) -> str:
        return ";".join(str(a) for a in self.axes)


@dataclass(frozen=True, slots=True)
class JointGrid:
    """A fusion grid with a param grid, as a sweep's record names it (``str()``, :meth:`canonical`)."""

    fusion: SweepSpec
    params: ParamGrid

    def specs(self) -> dict[str, Any]:
        """``{provider: spec}`` for :func:`~harness.sweep.grid`."""
        return {ParamsProvider.name: self.params, "fusion": self.fusion}

    def __str__(self) -> str:
        return f"{self.fusion} x params {self.params}"

    def canonical(self) -> str:
        return f"{self.fusion.canonical()} x params {self.params}"


class ParamsProvider:
    """Template parameters: each choice replaces the swept arms' runs by their searched settings' runs."""

    name = "params"
    stage = PARAMS_STAGE

    def choices(self, spec: Any, ctx: SweepContext) -> Sequence[Choice]:
        if not isinstance(spec, ParamGrid):
            raise ConfigError(f"the params sweep expects a ParamGrid, found {type(spec).__name__}")
        outside = [a for a in spec.arms if a not in ctx.inputs]
        if outside:
            raise ConfigError(
                f"swept params of arm {outside[0]!r}: expected an input of {ctx.output} ({', '.join(ctx.inputs)})"
            )
        return [Choice(self.name, p.label, p) for p in spec.points()]

    def apply(self, value: Any, ctx: SweepContext, runs: RunSet) -> dict[str, Run]:
        assert isinstance(value, ParamPoint)
        out: dict[str, Run] = {}
        for arm, setting in value.settings:
            key = variant_key(arm, setting)
            searched: Mapping[str, Mapping[str, float]] | None = runs.get(key)
            if searched is None:
                raise ConfigError(
                    f"the run of {key} is not among the searched runs: search every setting first"
                )
            out[arm] = {q: dict(searched.get(q, {})) for q in runs[arm]}
        return out


PROVIDERS[ParamsProvider.name] = ParamsProvider()
