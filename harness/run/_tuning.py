"""The engine side of held-out tuning (:mod:`harness.sweep`): what a sweep asks to be searched, checkpointed.

* another split's runs of the swept arm's inputs: ``arms/<dataset>/tune-<split>/``;
* each template setting's run (``[sweep.params]``): ``sweep/<dataset>/<split>/``, reused by every fusion;
* the in-engine sum's folds (k-fold): ``arms/<dataset>/<split>/sum-kfold<K>-seed<S>/fold-<i>/``.

It also says which sweep a dataset runs (:func:`sweep_task`) and the in-engine sum's weights
(:func:`sum_weights`: the fusion's, or chosen on the train split).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from base import slug
from harness._search import ArmRun
from harness.experiment import Experiment
from harness.run._execute import Executor
from harness.run._plan import DatasetPlan, PlannedArm
from harness.run._sites import Sites
from harness.strategies import TemplateArm
from harness.sweep import (
    HeldOutWeights,
    ParamGrid,
    SumGrid,
    SweepContext,
    SweepTask,
    SweptArm,
    choose_weights,
    held_out_weights,
    sweep_grid,
    variant_key,
)
from indexer import BM25_PARAMS, Dataset

Weights = tuple[float, float]
#: where the param grid's runs are checkpointed, under the run directory
SETTINGS_DIR = "sweep"


class Searcher:
    """Searches for the sweeps of one dataset (:class:`harness.sweep.Searches`), checkpointed."""

    def __init__(self, executor: Executor, dsplan: DatasetPlan, sites: Sites) -> None:
        self.executor, self.dsplan, self.sites = executor, dsplan, sites
        self.by_name = {a.name: a for a in dsplan.arms}

    def split_runs(self, ds: Dataset, arms: Sequence[str]) -> Mapping[str, ArmRun]:
        """``arms`` on another split (the train split), searched once."""
        folder = self.executor.checkpoints.arms(ds.name, f"tune-{ds.split}")
        return self.executor.search(ds, [self.by_name[a] for a in arms], self.sites, folder)

    def setting_runs(self, ds: Dataset, params: ParamGrid) -> Mapping[str, ArmRun]:
        """Each swept arm's run on ``ds`` under each of its settings (by :func:`variant_key`), searched once."""
        planned, extras = [], {}
        for name in params.arms:
            spec = self.by_name[name].spec
            assert isinstance(spec, TemplateArm)
            for setting in params.settings(name):
                key = variant_key(name, setting)
                planned.append(PlannedArm(key, replace(spec, params={**spec.params, **dict(setting)})))
                extras[key] = {"arm": name, "params": dict(setting)}
        folder = self.executor.checkpoints.folder(SETTINGS_DIR, slug(ds.name), slug(ds.split or "test"))
        before = self.executor.checkpoints.reused
        runs = self.executor.search(ds, planned, self.sites, folder, extras=extras)
        loaded = self.executor.checkpoints.reused - before
        self.executor.console.print(
            f"sweep on {ds.name}/{ds.split or 'test'}: {(len(planned) - loaded) * len(ds.queries):,} searches "
            f"sent, {loaded} settings from checkpoints",
            highlight=False,
        )
        return runs

    def weighted(self, ds: Dataset, weights: Weights, fold: int) -> Mapping[str, ArmRun]:
        """The weighted arms (the in-engine sum) searched on ``ds``'s queries with ``weights``."""
        exp, tune = self.executor.exp, self.executor.exp.tuning
        assert tune is not None
        folder = self.executor.checkpoints.arms(
            ds.name, ds.split, f"sum-kfold{tune.folds}-seed{exp.stats.seed}", f"fold-{fold}"
        )
        return self.executor.search(ds, self.dsplan.weighted_arms, self.sites, folder, weights)


def swept(exp: Experiment, dsplan: DatasetPlan) -> PlannedArm | None:
    """The fused arm a sweep chooses on: the one ``sweep.arm`` names (else the first), unexpanded."""
    if exp.tuning is None:
        return None
    named = exp.swept_arm
    return next(
        (a for a in dsplan.fused_arms if a.expansion is None and (named is None or a.name == named.name)),
        None,
    )


def sweep_task(exp: Experiment, dsplan: DatasetPlan) -> SweepTask | None:
    """The sweep of ``dsplan``'s dataset: its fused arm over the fusion grid (``sweep.grid``, else the arm's
    method's own parameter; with ``sweep.params`` alone, its fusion as written), times ``sweep.params``."""
    arm, tune = swept(exp, dsplan), exp.tuning
    if arm is None or tune is None:
        return None
    grid = sweep_grid(exp.grid, dsplan.fusion_of(arm, exp.fusion), exp.sweep.params)
    also = tuple(
        SweptArm(a.name, a.inputs) for a in dsplan.fused_arms if a.spec.name == arm.spec.name and a != arm
    )
    return SweepTask(SweptArm(arm.name, arm.inputs), tune, grid, exp.search.depth, exp.stats.seed, also)


def _sum_context(exp: Experiment, dsplan: DatasetPlan, executor: Executor) -> tuple[SumGrid, SweepContext]:
    """The sum is simulated from the primary fused arm's two inputs (lexical, vector), BM25 in ES units."""
    fused = dsplan.primary_fused
    assert fused is not None
    scale = executor.clusters.main.bm25_scale(BM25_PARAMS[exp.index.bm25][0])
    return SumGrid(scale), SweepContext(fused.inputs, "sum", exp.search.depth)


def sum_weights(executor: Executor, dsplan: DatasetPlan, searcher: Searcher) -> Weights:
    """The in-engine sum's weights: the fusion's, or with a train split chosen on its runs."""
    exp, tune = executor.exp, executor.exp.tuning
    if tune is None or tune.split is None:
        return exp.sum_weights
    grid, ctx = _sum_context(exp, dsplan, executor)
    train = dsplan.dataset.with_split(tune.split)
    runs = searcher.split_runs(train, ctx.inputs)
    weights = choose_weights(grid, ctx, {n: r.run for n, r in runs.items()}, train, sorted(train.queries))
    executor.console.print(
        f"in-engine sum weights tuned on {train.name}/{tune} ({len(train.queries)} queries): "
        f"lexical {weights[0]:g}, vector {weights[1]:g} (BM25 in Elasticsearch units)",
        highlight=False,
    )
    return weights


def kfold_sum(
    executor: Executor, dsplan: DatasetPlan, runs: Mapping[str, ArmRun], searcher: Searcher
) -> HeldOutWeights:
    """k-fold: each fold of the weighted arms searched with weights chosen on the other folds."""
    exp, tune, ds = executor.exp, executor.exp.tuning, dsplan.dataset
    assert tune is not None and tune.folds is not None
    grid, ctx = _sum_context(exp, dsplan, executor)
    inputs = {n: runs[n].run for n in ctx.inputs}
    found = held_out_weights(grid, ctx, inputs, ds, tune, exp.stats.seed, searcher.weighted)
    for i, (weights, chosen_on, held) in enumerate(found.folds):
        executor.console.print(
            f"in-engine sum weights of fold {i + 1}/{tune.folds} on {ds.name} (chosen on the other "
            f"{chosen_on} queries, {held} held out): lexical {weights[0]:g}, vector {weights[1]:g} "
            "(BM25 in Elasticsearch units)",
            highlight=False,
        )
    return found
