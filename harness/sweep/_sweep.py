"""One held-out sweep of a fused arm: score every configuration of the joint grid per query, choose per fold.

Each configuration (:mod:`._configs`: fusion, and with template parameters :mod:`._params`) is run on the
swept arm's inputs and scored per query on the primary measure, once: ``configurations x queries``
rankings (plus the train split's with ``tune_on = "train"``). :func:`~harness.sweep.select` then chooses
per fold, and the fused arms' runs are rebuilt from the choices: each query ranked by the configuration
chosen without it, so the arm's metrics, interval and paired tests are the held-out ones. The in-engine
sum's weights are the third provider (:mod:`._sum`); what needs the engine (another split's runs, each
template setting's runs, the weighted arms' searches) comes from the caller (:class:`Searches`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.console import Console

from base import ConfigError, progress
from harness._search import ArmRun
from harness.eval import PRIMARY_MEASURE, FusionSpec, evaluate
from harness.sweep._configs import Configuration, SweepContext, grid
from harness.sweep._heldout import Selection, TuneOn, kfold_folds, kfold_split, select
from harness.sweep._params import JointGrid, ParamGrid, ParamPoint, variant_key
from harness.sweep._spec import SweepSpec
from indexer import Dataset

FUSION = "fusion"


@dataclass(frozen=True, slots=True)
class SweptArm:
    """A fused arm a sweep rebuilds: its name and its input arms."""

    name: str
    inputs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SweepTask:
    """What one sweep tunes: ``arm`` is chosen on, ``also`` rebuilt with its choices (expanded variants)."""

    arm: SweptArm
    tune_on: TuneOn
    grid: SweepSpec | JointGrid  # JointGrid: template parameters with the fusion grid
    depth: int
    seed: int
    also: tuple[SweptArm, ...] = ()

    @property
    def context(self) -> SweepContext:
        return SweepContext(self.arm.inputs, self.arm.name, self.depth)

    @property
    def params(self) -> ParamGrid | None:
        return self.grid.params if isinstance(self.grid, JointGrid) else None

    def configurations(self) -> dict[str, Configuration]:
        specs = self.grid.specs() if isinstance(self.grid, JointGrid) else {FUSION: self.grid}
        return {c.label: c for c in grid(specs, self.context)}

    def cost_line(self, ds: Dataset) -> str:
        """What the sweep will cost on ``ds``, said before any work (a protocol ``ds`` cannot run fails here)."""
        n, queries = len(self.configurations()), len(ds.queries)
        train, tune = check_protocol(self.tune_on, ds), self.tune_on
        if tune.folds is not None:
            held = queries // tune.folds
            how = f"{tune}: each fold chooses on ~{queries - held} queries and scores the other ~{held}"
        else:
            how = f"chosen on {tune.split} ({train} queries), scored on {ds.split or 'test'} ({queries})"
        line = (
            f"sweep of {self.arm.name} on {ds.name}: {n:,} configurations x {queries + train} queries = "
            f"{n * (queries + train):,} rankings scored on {PRIMARY_MEASURE.key} ({how}); grid {self.grid}"
        )
        params = self.params
        if params is not None:
            settings = sum(len(params.settings(a)) for a in params.arms)
            line += (
                f"; the param grid searches {settings} arm settings x {queries + train} queries = "
                f"{params.searches(queries + train):,} searches (checkpointed, reused by every fusion)"
            )
        return line


def sweep_grid(grid: SweepSpec | None, fusion: FusionSpec, params: ParamGrid | None) -> SweepSpec | JointGrid:
    """What a sweep of a fused arm chooses from: ``grid`` (default: the arm's method's own parameter; with
    template parameters alone, the arm's fusion as written), times the template parameters."""
    spec = grid or (SweepSpec.fixed(fusion) if params is not None else SweepSpec.for_method(fusion))
    return JointGrid(spec, params) if params is not None else spec


class Searches(Protocol):
    """What a sweep needs from the engine: runs of another split, and of each template setting (both
    searched once and checkpointed by the caller)."""

    def split_runs(self, ds: Dataset, arms: Sequence[str]) -> Mapping[str, ArmRun]: ...

    def setting_runs(self, ds: Dataset, params: ParamGrid) -> Mapping[str, ArmRun]: ...


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What a sweep chose, and the held-out runs of the fused arms it rebuilt."""

    arm: str
    tune_on: TuneOn
    grid: SweepSpec | JointGrid
    selection: Selection
    configurations: dict[str, Configuration]
    runs: dict[str, ArmRun]

    @property
    def fusion(self) -> FusionSpec | None:
        """The one fusion every held-out query used, if there is one (a train split: always)."""
        chosen = {f.chosen for f in self.selection.folds}
        if len(chosen) != 1:
            return None
        value = self.configurations[chosen.pop()].value(FUSION)
        return value if isinstance(value, FusionSpec) else None


def check_protocol(tune: TuneOn, ds: Dataset) -> int:
    """The number of queries the sweep chooses on besides the evaluated ones; a ConfigError before any work
    when the protocol cannot run on ``ds`` (too few queries for K folds, no such split, the evaluated one)."""
    queries = len(ds.queries)
    if tune.folds is not None:
        if tune.folds > queries:
            raise ConfigError(
                f"expected kfold:K with 2 <= K <= {queries} (the queries of {ds.name}), found K={tune.folds}"
            )
        return 0
    if tune.split == (ds.split or "test"):
        raise ConfigError(f"the split {tune.split} is the evaluation split: tuning must never see it")
    if tune.split not in ds.splits:
        raise ConfigError(
            f"dataset {ds.name} has no {tune.split!r} split to tune on (splits: {', '.join(ds.splits) or 'none'}); "
            "without one, tune on kfold[:K]"
        )
    return len(ds.with_split(tune.split).queries)


def score_matrix(
    configs: Sequence[Configuration],
    ctx: SweepContext,
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    ds: Dataset,
    console: Console,
    enabled: bool,
) -> dict[str, dict[str, float]]:
    """``{configuration: {qid: primary measure}}`` over ``ds``'s judged queries."""
    matrix: dict[str, dict[str, float]] = {}
    what = f"sweeping {ctx.output} on {ds.name}/{ds.split or 'test'}"
    total = len(configs) * len(ds.queries)
    with progress(what, total, unit="rankings", console=console, enabled=enabled) as bar:
        for config in configs:
            ev = evaluate(ds.qrels, config.run(ctx, runs), [PRIMARY_MEASURE])
            matrix[config.label] = ev.per_query[PRIMARY_MEASURE.key]
            bar.advance(len(ds.queries))
    return matrix


def kfold_selection(matrix: Mapping[str, Mapping[str, float]], folds: int, seed: int) -> Selection:
    """Choose on K-1 folds, score the held-out one, for each of the K seeded folds."""
    qids = sorted(next(iter(matrix.values())))
    return select(matrix, matrix, kfold_folds(kfold_split(qids, folds, seed)))


def _parts(config: Configuration, arm: SweptArm, runs: Mapping[str, ArmRun]) -> list[ArmRun]:
    """The runs a configuration ranks from: each input's, or its chosen setting's."""
    point = config.value("params")
    settings = dict(point.settings) if isinstance(point, ParamPoint) else {}
    return [runs[variant_key(n, settings[n])] if n in settings else runs[n] for n in arm.inputs]


def held_out_run(
    arm: SweptArm,
    selection: Selection,
    configs: Mapping[str, Configuration],
    runs: Mapping[str, ArmRun],
    depth: int,
) -> ArmRun:
    """``arm``'s run with each fold's queries ranked by the configuration chosen without them (their latency:
    the chosen runs' searches)."""
    ctx = SweepContext(arm.inputs, arm.name, depth)
    run: dict[str, dict[str, float]] = {}
    took: dict[str, float] = {}
    client: dict[str, float] = {}
    for fold in selection.folds:
        held = set(fold.held_out)
        inputs = {name: {q: d for q, d in r.run.items() if q in held} for name, r in runs.items()}
        run.update(configs[fold.chosen].run(ctx, inputs))
        parts = _parts(configs[fold.chosen], arm, runs)
        took.update({q: sum(p.took_ms.get(q, 0.0) for p in parts) for q in held})
        client.update({q: max(p.client_ms.get(q, 0.0) for p in parts) for q in held})
    parts = [runs[name] for name in arm.inputs]
    qids = sorted({q for p in parts for q in p.run} | set(run))
    return ArmRun(
        run={q: run.get(q, {}) for q in qids},
        took_ms={q: took.get(q, 0.0) for q in qids},
        client_ms={q: client.get(q, 0.0) for q in qids},
        wall_s=max(p.wall_s for p in parts),
        retries=sum(p.retries for p in parts),
    )


def _inputs(
    task: SweepTask, ds: Dataset, base: Mapping[str, ArmRun], searches: Searches
) -> dict[str, ArmRun]:
    """The swept arm's inputs on ``ds`` and, with template parameters, each setting's run."""
    runs = {name: base[name] for name in task.arm.inputs}
    if task.params is not None:
        runs.update(searches.setting_runs(ds, task.params))
    return runs


def tune(
    task: SweepTask,
    ds: Dataset,
    runs: Mapping[str, ArmRun],
    searches: Searches,
    console: Console,
    enabled: bool = True,
) -> SweepOutcome:
    """Tune ``task.arm`` on ``ds`` (``runs``: every arm's run on it), every query scored held out."""
    configs, ctx = task.configurations(), task.context
    evaluated = _inputs(task, ds, runs, searches)
    every = list(configs.values())
    score = score_matrix(every, ctx, {n: r.run for n, r in evaluated.items()}, ds, console, enabled)
    if task.tune_on.folds is not None:
        selection = kfold_selection(score, task.tune_on.folds, task.seed)
    else:
        assert task.tune_on.split is not None
        train = ds.with_split(task.tune_on.split)
        on_train = _inputs(task, train, searches.split_runs(train, task.arm.inputs), searches)
        choose = score_matrix(every, ctx, {n: r.run for n, r in on_train.items()}, train, console, enabled)
        selection = select(choose, score, [(sorted(train.queries), sorted(next(iter(score.values()))))])
    rebuilt = (task.arm, *task.also) if task.params is None else (task.arm,)
    held = {a.name: held_out_run(a, selection, configs, {**runs, **evaluated}, task.depth) for a in rebuilt}
    console.print(_chosen_line(task, ds, selection), highlight=False)
    return SweepOutcome(task.arm.name, task.tune_on, task.grid, selection, configs, held)


def _chosen_line(task: SweepTask, ds: Dataset, selection: Selection) -> str:
    tune = task.tune_on
    chosen = "; ".join(
        f"fold {f.fold + 1} {f.chosen}" if tune.is_kfold else f"on {tune.split} {f.chosen}"
        for f in selection.folds
    )
    return (
        f"sweep of {task.arm.name} on {ds.name} ({tune}): held-out {PRIMARY_MEASURE.key} "
        f"{selection.held_out:.4f}; in-sample best {selection.in_sample_score:.4f} "
        f"({selection.in_sample_best}, optimistic); chosen: {chosen}"
    )
