"""The steps of one dataset, in order: place the arms, search them, tune, fuse, rerank, score.

sites      every arm's cluster, index and model; the dataset's index built where arms need it
weights    the in-engine sum's weights (the fusion's, or chosen on a train split)
search     every engine arm (checkpointed); k-fold: the sum's folds, each with its own weights; under R2MED's
           protocol, a vector arm's result whose id is the query's id dropped (its dense evaluation's rule)
fuse       the fused arms; the swept one (and its expanded variants) held out by its sweep
rerank     the reranked arms
judge      a judgments source that needs the arms' results (an LLM judge over their pooled top-k), once
score      every arm against the dataset's judgments (or the source's, as judgments.mode met them), with the
           experiment's relevance level and protocol (``eval.*``)
"""

from __future__ import annotations

from dataclasses import replace

from harness._search import ArmRun
from harness.eval import drop_query_ids, evaluate, judged_only, parse_measures, rankings, ranx_ready
from harness.judgments.sources import AfterSearch
from harness.results import ArmTarget
from harness.run._execute import Executor
from harness.run._outcome import DatasetOutcome
from harness.run._plan import DatasetPlan
from harness.run._sites import Sites
from harness.run._tuning import Searcher, kfold_sum, sum_weights, sweep_task
from harness.strategies import FusedArm, RerankedArm, SearchArm, TemplateArm
from harness.sweep import tune


def _search(
    executor: Executor, dsplan: DatasetPlan, sites: Sites, searcher: Searcher, outcome: DatasetOutcome
) -> None:
    """Every engine arm's run; the weighted arms with their weights (k-fold: fold by fold)."""
    ds, tuning = dsplan.dataset, executor.exp.tuning
    kfold = bool(dsplan.weighted_arms) and tuning is not None and tuning.is_kfold
    if dsplan.weighted_arms and not kfold:
        outcome.sum_weights = sum_weights(executor, dsplan, searcher)
    deferred = {a.name for a in dsplan.weighted_arms} if kfold else set()
    arms = [a for a in dsplan.search_arms if a.name not in deferred]
    folder = executor.checkpoints.arms(ds.name, ds.split)
    outcome.runs.update(executor.search(ds, arms, sites, folder, outcome.sum_weights, outcome.targets))
    if kfold:
        found = kfold_sum(executor, dsplan, outcome.runs, searcher)
        outcome.runs.update(found.runs)
        outcome.sum_fold_weights = tuple(w for w, _, _ in found.folds)
    if executor.exp.eval.rules.drop_query_id:
        for arm in dsplan.search_arms:
            if (
                isinstance(arm.spec, SearchArm | TemplateArm)
                and arm.spec.needs_vector
                and arm.name in outcome.runs
            ):
                res = outcome.runs[arm.name]
                outcome.runs[arm.name] = replace(res, run=drop_query_ids(res.run))


def _fuse(executor: Executor, dsplan: DatasetPlan, searcher: Searcher, outcome: DatasetOutcome) -> None:
    """Every fused arm; with a sweep, the swept arm (and its variants) rebuilt held out."""
    exp = executor.exp
    for arm in dsplan.fused_arms:
        assert isinstance(arm.spec, FusedArm)
        outcome.runs[arm.name] = executor.fuse(arm, outcome.runs)
        if arm.own:
            outcome.targets[arm.name] = ArmTarget(fusion=str(arm.spec.fusion), inputs=arm.inputs)
    primary = dsplan.primary_fused
    if primary is not None:
        outcome.fusion = dsplan.fusion_of(primary, exp.fusion)
    task = sweep_task(exp, dsplan)
    if task is None:
        return
    sweep = tune(task, dsplan.dataset, outcome.runs, searcher, executor.console, exp.progress)
    outcome.runs.update(sweep.runs)
    outcome.sweep, outcome.fusion = sweep, sweep.fusion
    for name in sweep.runs:
        if name in outcome.targets:
            held = f"held out ({task.tune_on}) over {task.grid}"
            outcome.targets[name] = replace(outcome.targets[name], fusion=held)


def _rerank(executor: Executor, dsplan: DatasetPlan, outcome: DatasetOutcome) -> None:
    ds = dsplan.dataset
    folder = executor.checkpoints.arms(ds.name, ds.split)
    for arm in dsplan.reranked_arms:
        assert isinstance(arm.spec, RerankedArm)
        outcome.runs[arm.name] = executor.rerank(ds, arm, outcome.runs[arm.spec.input], folder)


def _judge(executor: Executor, dsplan: DatasetPlan, outcome: DatasetOutcome) -> None:
    """The labels of an after-search judgments source (an LLM judge) for every arm's results: judged once,
    after every arm has its run and before any is scored (its answers cached as they arrive: a rerun makes
    no call it made before)."""
    exp = executor.exp
    source = exp.judgments.spec
    if not source.after_search:
        return
    ctx = AfterSearch(
        exp.judgments.mode,
        executor.plan.run_dir,
        outcome.index,
        executor.clusters.main,
        executor.console,
        exp.progress,
    )
    ranked = {name: rankings(res.run) for name, res in outcome.runs.items()}
    outcome.judged = source.judge(dsplan.dataset, ranked, ctx)
    for line in outcome.judged.notes:
        executor.console.print(f"{dsplan.dataset.name}: {line}", highlight=False, soft_wrap=True)


def _report_missing(executor: Executor, outcome: DatasetOutcome) -> None:
    for name, target in outcome.targets.items():
        if target.missing_judged:
            executor.console.print(
                f"{outcome.dataset.name}/{name}: {len(target.missing_judged)} of {target.judged} judged documents "
                f"({target.missing_relevant} relevant) are not in {target.index}; they still count in the ideal ranking",
                highlight=False,
            )


def run_dataset(executor: Executor, dsplan: DatasetPlan) -> DatasetOutcome:
    """Execute every step of one dataset (see the module doc)."""
    sites = executor.place(dsplan)
    first = dsplan.search_arms[0].spec.name
    outcome = DatasetOutcome(
        dsplan, sites.by_arm[first].index, {}, {}, None, sites.timings, sites.summary, sites
    )
    searcher = Searcher(executor, dsplan, sites)
    reused = executor.checkpoints.reused
    if executor.exp.tuning is not None:
        ranx_ready()  # the sum's weights are chosen with ranx during the search
    _search(executor, dsplan, sites, searcher, outcome)
    ranx_ready()  # from here on ranx fuses and scores: its warm-up thread (started by the runner) is done
    _fuse(executor, dsplan, searcher, outcome)
    _rerank(executor, dsplan, outcome)
    runs: dict[str, ArmRun] = {arm.name: outcome.runs[arm.name] for arm in dsplan.arms}
    outcome.runs = runs
    outcome.judged = dsplan.judged
    _judge(executor, dsplan, outcome)
    qrels, rules = outcome.scored.qrels, executor.exp.eval
    measures = parse_measures(executor.exp.stats.measures)
    measures = judged_only(measures) if rules.judged_only else measures
    outcome.evaluations = {
        name: evaluate(
            qrels, res.run, measures, relevance_level=rules.relevance_level, complete=rules.counts_empty
        )
        for name, res in runs.items()
    }
    outcome.targets = {name: t for name, t in outcome.targets.items() if name in runs}
    _report_missing(executor, outcome)
    if executor.checkpoints.reused > reused:
        executor.console.print(
            f"resuming {executor.plan.run_dir}: {executor.checkpoints.reused - reused} arms reused "
            f"({dsplan.dataset.name})",
            highlight=False,
        )
    return outcome
