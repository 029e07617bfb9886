"""``[sweep]``: an experiment's fused arm tuned over a fusion grid, every query scored held out.

The same protocol as ``harness run hybrid --tune-on`` (:mod:`harness.run._sweep`, :mod:`harness.sweep`):
each configuration of the grid fuses the arm's inputs and is scored per query; with ``kfold[:K]``
each fold's queries are ranked by the configuration chosen on the other folds, with ``train`` by
the one chosen on the train split (whose queries the input arms search first). The fused arm's
run, metrics and tests are then the held-out ones; the in-sample best is kept beside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from rich.console import Console

from harness.eval import PRIMARY_MEASURE, evaluate
from harness.experiment._config import ExperimentConfig
from harness.experiment._execute import ArmSite, ExperimentOutcome, render_all, search_all
from harness.run import (
    DatasetPlan,
    SweepOutcome,
    held_out_runs,
    kfold_selection,
    score_matrix,
)
from harness.sweep import SweepContext, SweepSpec, grid, select

FUSION = "fusion"


def grid_of(exp: ExperimentConfig) -> SweepSpec | None:
    """The grid ``[sweep]`` chooses from: its ``grid``, or the swept arm's own method's parameters."""
    arm = exp.swept_arm
    if arm is None or exp.run.tuning is None:
        return None
    if isinstance(exp.run.sweep, SweepSpec):
        return exp.run.sweep
    assert arm.fusion is not None
    return SweepSpec.for_method(arm.fusion)


def sweep_fused(
    exp: ExperimentConfig,
    dsplan: DatasetPlan,
    done: ExperimentOutcome,
    sites: Mapping[str, ArmSite],
    console: Console,
) -> SweepOutcome | None:
    """Tune the swept arm held out; its run, evaluation and target in ``done`` become the held-out ones."""
    arm, spec, tuning = exp.swept_arm, grid_of(exp), exp.run.tuning
    if arm is None or spec is None or tuning is None:
        return None
    ds, depth = done.dataset, exp.run.depth
    ctx = SweepContext(arm.inputs, arm.name, depth)
    configs = {c.label: c for c in grid({FUSION: spec}, ctx)}
    console.print(
        f"sweep of {arm.name} on {ds.name}: {len(configs)} configurations x {len(ds.queries)} queries, "
        f"chosen held out ({tuning}); grid {spec}",
        highlight=False,
    )
    inputs = {name: done.runs[name].run for name in arm.inputs}
    score = score_matrix(list(configs.values()), ctx, inputs, ds, console, exp.run.progress)
    if tuning.folds is not None:
        selection = kfold_selection(score, tuning.folds, exp.run.seed)
    else:
        assert tuning.split is not None
        train = ds.with_split(tuning.split)
        searched = [a for a in exp.arms if a.name in arm.inputs]
        runs = search_all(exp, searched, render_all(exp, searched, train, sites), sites, console)
        choose = score_matrix(
            list(configs.values()), ctx, {n: r.run for n, r in runs.items()}, train, console, exp.run.progress
        )
        selection = select(choose, score, [(sorted(train.queries), sorted(next(iter(score.values()))))])
    planned = [a for a in dsplan.fused_arms if a.name == arm.name]
    held = held_out_runs(done.runs, planned, selection, configs, depth)
    done.runs.update(held)
    done.evaluations[arm.name] = evaluate(ds.qrels, held[arm.name].run, exp.run.measures)
    done.targets[arm.name] = replace(done.targets[arm.name], fusion=f"held out ({tuning}) over {spec}")
    console.print(
        f"sweep of {arm.name}: held-out {PRIMARY_MEASURE.key} {selection.held_out:.4f}; in-sample best "
        f"{selection.in_sample_score:.4f} ({selection.in_sample_best}, optimistic)",
        highlight=False,
    )
    return SweepOutcome(arm.name, tuning, spec, selection, configs, held)
