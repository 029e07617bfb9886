"""Typed results of ``--tune-on``: what a held-out sweep chose per fold, and what it scored.

``HeldOutSweep`` (``DatasetResult.sweep``) holds the score to report (every query scored by the
configuration chosen without it, with its bootstrap interval) beside the in-sample best, which is
optimistic: chosen and scored on the same queries. ``TuningChoices`` (``Manifest.tuning``) holds
the grid, the protocol and the configuration each fold chose, enough to reproduce the choice.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SweepFold:
    """One fold: the configuration chosen on the other queries, its score there and on this fold."""

    fold: int
    chosen: dict[str, str]
    """``{provider: configuration}``, e.g. ``{"fusion": "wsum:norm=min-max,weights=0.3/0.7"}``."""
    choose_queries: int
    held_out_queries: int
    choose_score: float
    held_out_score: float


@dataclass(frozen=True, slots=True)
class TuningChoices:
    """How a fused arm was chosen: the grid, the protocol (a split or kfold:K), the seed, the folds."""

    arm: str
    grid: str
    tune_on: str
    seed: int
    configurations: int
    measure: str
    folds: tuple[SweepFold, ...] = ()
    every_value: str = ""
    """The grid with every value spelled out (``grid`` is as given: a name, or ranges)."""


@dataclass(frozen=True, slots=True)
class HeldOutSweep:
    """The swept arm's held-out score (the one to report) and the optimistic in-sample best."""

    arm: str
    measure: str
    held_out: float
    """Mean over every evaluated query, each scored by the configuration chosen without it."""
    ci95: tuple[float, float]
    in_sample_best: float
    """The best configuration's mean on the evaluated queries themselves: optimistic."""
    in_sample_config: dict[str, str]
    choices: TuningChoices
