"""``--tune-on`` for the fused arms: score every configuration of the grid per query, choose held out.

Each configuration of the joint grid (:mod:`harness.sweep`) is run on the fused arm's inputs and
scored per query on the primary measure, once: ``configurations x queries`` rankings (plus the
train split's with ``--tune-on train``). :func:`harness.sweep.select` then chooses per fold. The
fused arms' runs are rebuilt from the choices: each query ranked by the configuration chosen
without it, so the arm's metrics, interval and paired tests are the held-out ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console

from harness._search import ArmRun
from harness.eval import PRIMARY_MEASURE, FusionSpec, evaluate
from harness.results import ArmResult, HeldOutSweep, SweepFold, TuningChoices
from harness.sweep import (
    Configuration,
    JointGrid,
    Selection,
    SweepContext,
    SweepSpec,
    TuneOn,
    grid,
    kfold_folds,
    kfold_split,
    select,
)
from indexer import ConfigError, Dataset, progress

if TYPE_CHECKING:
    from harness.run._config import RunConfig
    from harness.run._plan import DatasetPlan, PlannedArm, RunPlan

FUSION = "fusion"


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What a sweep chose, and the held-out runs of the fused arms it rebuilt."""

    arm: str
    tune_on: TuneOn
    grid: SweepSpec | JointGrid  # JointGrid: an experiment's [sweep.params] with its fusion grid
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


def primary_fused(dsplan: DatasetPlan) -> PlannedArm:
    """The fused arm the sweep chooses on: the first one searched without an expansion."""
    return next(a for a in dsplan.fused_arms if a.expansion is None)


def configurations(config: RunConfig, ctx: SweepContext) -> tuple[Configuration, ...]:
    return grid({FUSION: config.sweep_spec}, ctx)


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
        raise ConfigError(f"--tune-on {tune.split} is the evaluation split: tuning must never see it")
    if tune.split not in ds.splits:
        raise ConfigError(
            f"dataset {ds.name} has no {tune.split!r} split to tune on (splits: {', '.join(ds.splits) or 'none'}); "
            "without one, use --tune-on kfold[:K]"
        )
    return len(ds.with_split(tune.split).queries)


def cost_lines(plan: RunPlan) -> list[str]:
    """What each dataset's sweep will cost, said before any work: configurations x queries (x folds)."""
    cfg, out = plan.config, list[str]()
    tune = cfg.tuning
    if tune is None:
        return out
    for dsplan in (p for p in plan.datasets if p.fused_arms):
        fused = primary_fused(dsplan)
        n = len(configurations(cfg, SweepContext(fused.inputs, fused.name, cfg.depth)))
        ds, queries = dsplan.dataset, len(dsplan.dataset.queries)
        train = check_protocol(tune, ds)
        if tune.folds is not None:
            held = queries // tune.folds
            how = f"{tune}: each fold chooses on ~{queries - held} queries and scores the other ~{held}"
        else:
            how = f"chosen on {tune.split} ({train} queries), scored on {ds.split or 'test'} ({queries})"
        out.append(
            f"sweep of {fused.name} on {ds.name}: {n} configurations x {queries + train} queries = "
            f"{n * (queries + train):,} rankings scored on {PRIMARY_MEASURE.key} ({how}); grid {cfg.sweep_spec}"
        )
    return out


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


def held_out_runs(
    outcome_runs: Mapping[str, ArmRun],
    fused: Sequence[PlannedArm],
    selection: Selection,
    configs: Mapping[str, Configuration],
    depth: int,
) -> dict[str, ArmRun]:
    """Each fused arm's run with every query ranked by the configuration its fold chose."""
    out = {}
    for arm in fused:
        ctx = SweepContext(arm.inputs, arm.name, depth)
        parts = [outcome_runs[name] for name in arm.inputs]
        run: dict[str, dict[str, float]] = {}
        for fold in selection.folds:
            held = set(fold.held_out)
            inputs = {
                name: {q: d for q, d in outcome_runs[name].run.items() if q in held} for name in arm.inputs
            }
            run.update(configs[fold.chosen].run(ctx, inputs))
        qids = sorted({q for p in parts for q in p.run} | set(run))
        out[arm.name] = ArmRun(
            run={q: run.get(q, {}) for q in qids},
            took_ms={q: sum(p.took_ms.get(q, 0.0) for p in parts) for q in qids},
            client_ms={q: max(p.client_ms.get(q, 0.0) for p in parts) for q in qids},
            wall_s=max(p.wall_s for p in parts),
            retries=sum(p.retries for p in parts),
        )
    return out


def kfold_selection(matrix: Mapping[str, Mapping[str, float]], folds: int, seed: int) -> Selection:
    """Choose on K-1 folds, score the held-out one, for each of the K seeded folds."""
    qids = sorted(next(iter(matrix.values())))
    return select(matrix, matrix, kfold_folds(kfold_split(qids, folds, seed)))


def tuning_choices(sweep: SweepOutcome, seed: int) -> TuningChoices:
    """The manifest's record of the sweep: grid, protocol, seed and each fold's choice."""
    folds = tuple(
        SweepFold(
            fold=f.fold + 1,
            chosen=sweep.configurations[f.chosen].params,
            choose_queries=f.choose_queries,
            held_out_queries=len(f.held_out),
            choose_score=round(f.choose_score, 6),
            held_out_score=round(f.held_out_score, 6),
        )
        for f in sweep.selection.folds
    )
    return TuningChoices(
        arm=sweep.arm,
        grid=str(sweep.grid),
        tune_on=str(sweep.tune_on),
        seed=seed,
        configurations=sweep.selection.configurations,
        measure=PRIMARY_MEASURE.key,
        folds=folds,
        every_value=sweep.grid.canonical(),
    )


def held_out_sweep(sweep: SweepOutcome, arm: ArmResult, seed: int) -> HeldOutSweep:
    """The dataset's sweep record: the arm's held-out score and interval, and the in-sample best."""
    key = PRIMARY_MEASURE.key
    return HeldOutSweep(
        arm=sweep.arm,
        measure=key,
        held_out=arm.metrics[key],
        ci95=arm.ci95[key],
        in_sample_best=round(sweep.selection.in_sample_score, 6),
        in_sample_config=sweep.configurations[sweep.selection.in_sample_best].params,
        choices=tuning_choices(sweep, seed),
    )
