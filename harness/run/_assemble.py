"""Assemble: typed results from what execution produced (metrics, intervals, tests, baselines)."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

from harness._paper import reference_rows
from harness._search import ArmRun
from harness.eval import (
    PRIMARY_MEASURE,
    Comparison,
    Evaluation,
    Overlap,
    QueryOverlap,
    compare_arms,
    compare_overlap,
    rankings,
)
from harness.results import (
    ArmResult,
    DatasetInfo,
    DatasetResult,
    EngineInfo,
    EvalSettings,
    HeldOutSweep,
    Manifest,
    ModelInfo,
    PaperBaseline,
    Percentiles,
    RunResults,
    SweepFold,
    TuningChoices,
    scores_and_intervals,
)
from harness.run._outcome import DatasetOutcome
from harness.run._perf import performance_settings, with_performance
from harness.run._plan import RunPlan
from harness.sweep import SweepOutcome
from indexer import Capabilities, ConnectionSettings, __version__


def git_sha() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).parent
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def start_manifest(plan: RunPlan, settings: ConnectionSettings, caps: Capabilities) -> Manifest:
    """The manifest written when the run starts (status ``running``)."""
    spec = plan.model
    exp = plan.experiment
    return Manifest(
        run_id=plan.run_id,
        config_hash=plan.config_hash,
        created=datetime.now(UTC).isoformat(),
        mode=exp.label,
        engine=EngineInfo(settings.redacted(), caps, auth=settings.auth_kind, serverless=caps.serverless),
        datasets={
            p.dataset.name: DatasetInfo(
                p.dataset.source,
                p.dataset.split,
                len(p.dataset.queries),
                p.dataset.corpus_size,
                asdict(p.dataset.fingerprint),
                revision=p.dataset.revision,
                expansion=p.expansion.info() if p.expansion is not None else None,
            )
            for p in plan.datasets
        },
        config=plan.identity,
        harness_version=__version__,
        git_sha=git_sha(),
        python=platform.python_version(),
        fusion=exp.fusion if any(p.takes_run_fusion for p in plan.datasets) else None,
        model=ModelInfo(
            spec.model_id,
            spec.revision,
            spec.field_name,
            spec.query_prompt,
            spec.document_prompt,
            spec.backend,
            spec.precision,
            pooling=spec.pooling,
            similarity=spec.similarity,
            trust_remote_code=spec.trust_remote_code,
            chosen_by=spec.chosen_by or None,
        )
        if spec is not None
        else None,
        analysis=plan.analysis or None,
        evaluation=EvalSettings(exp.eval.protocol, exp.eval.relevance_level, exp.eval.counts_empty),
        notices=plan.notices,
    )


def arm_result(
    run: ArmRun, evaluation: Evaluation, queries: int, seed: int, weights: tuple[float, float] | None = None
) -> ArmResult:
    metrics, ci95 = scores_and_intervals(evaluation, seed)
    return ArmResult(
        metrics=metrics,
        ci95=ci95,
        batch_ms=Percentiles.of(list(run.client_ms.values())),
        engine_took_ms=Percentiles.of(list(run.took_ms.values())),
        qps=round(queries / run.wall_s, 2) if run.wall_s > 0 else None,
        queries=queries,
        empty_queries=evaluation.empty_qids,
        retries=run.retries,
        weights=weights,
    )


def comparisons(plan: RunPlan, outcomes: Sequence[DatasetOutcome]) -> list[Comparison]:
    """Paired tests of every arm against the arms it declares (Holm-corrected together, over datasets)."""
    stats = plan.experiment.stats
    per_query = {
        o.dataset.name: {arm: ev.per_query[PRIMARY_MEASURE.key] for arm, ev in o.evaluations.items()}
        for o in outcomes
    }
    arms = outcomes[0].plan.arms if outcomes else ()
    present = {a.name for a in arms}
    pairs = [(base, arm.name) for arm in arms for base in arm.compare_to if base in present]
    if not pairs:
        return []
    return compare_arms(
        per_query,
        pairs,
        measure=PRIMARY_MEASURE.key,
        test=stats.test,
        alpha=stats.alpha,
        seed=stats.seed,
        shared_queries=not plan.experiment.eval.counts_empty,  # arms' means each over their answered queries
    )


def arm_overlaps(outcome: DatasetOutcome) -> list[tuple[Overlap, list[QueryOverlap]]]:
    """overlap@10 and RBO_ext of the paired tests' pairs (every arm against the arms it declares)."""
    runs = outcome.runs
    pairs = [(base, arm.name) for arm in outcome.plan.arms for base in arm.compare_to if base in runs]
    ranked = {outcome.dataset.name: {arm: rankings(res.run) for arm, res in runs.items()}}
    return compare_overlap(ranked, pairs)


def dataset_result(outcome: DatasetOutcome, tests: Sequence[Comparison], seed: int) -> DatasetResult:
    name = outcome.dataset.name
    n = len(outcome.dataset.queries)
    summary = outcome.index_summary
    weighted = {a.name for a in outcome.plan.weighted_arms}
    arms = {
        arm: arm_result(outcome.runs[arm], ev, n, seed, outcome.sum_weights if arm in weighted else None)
        for arm, ev in outcome.evaluations.items()
    }
    for arm in weighted & set(arms) if outcome.sum_fold_weights else ():
        arms[arm] = replace(arms[arm], fold_weights=outcome.sum_fold_weights)
    for arm, target in outcome.targets.items():
        arms[arm] = replace(arms[arm], target=target)
    sweep = outcome.sweep
    return DatasetResult(
        arms=arms,
        significance=tuple(c for c in tests if c.dataset == name),
        paper={row.label: PaperBaseline(row.system, row.score) for row in reference_rows(name, "ndcg_at_10")},
        index=outcome.index,
        mapping_hash=summary.mapping_hash if summary else None,
        fusion=outcome.fusion,
        timings=outcome.timings,
        fingerprint=outcome.scored.fingerprint.combined,
        overlap=tuple(summary for summary, _ in arm_overlaps(outcome)),
        sweep=held_out_sweep(sweep, arms[sweep.arm], seed) if sweep is not None else None,
        judgments=outcome.judged.used if outcome.judged is not None else None,
    )


def assemble(plan: RunPlan, outcomes: Sequence[DatasetOutcome], manifest: Manifest) -> RunResults:
    """The run's typed results; the manifest is marked complete."""
    tests = comparisons(plan, outcomes)
    exp, seed = plan.experiment, plan.experiment.stats.seed
    finished = replace(
        manifest,
        status="complete",
        finished=datetime.now(UTC).isoformat(),
        fusion_tuned={o.dataset.name: o.fusion for o in outcomes if exp.sweep.tune_on and o.fusion},
        tuning={o.dataset.name: tuning_choices(o.sweep, seed) for o in outcomes if o.sweep},
        datasets=scored_datasets(manifest, outcomes),
        **performance_settings(exp, outcomes),
    )
    datasets = {
        o.dataset.name: with_performance(dataset_result(o, tests, seed), o.performance) for o in outcomes
    }
    return RunResults(datasets=datasets, manifest=finished)


def scored_datasets(manifest: Manifest, outcomes: Sequence[DatasetOutcome]) -> dict[str, DatasetInfo]:
    """The manifest's datasets, each fingerprint covering the judgments its arms were scored with (a source's:
    click logs, a judge), as the results' fingerprint does."""
    scored = {o.dataset.name: o.scored.fingerprint for o in outcomes if o.judged is not None}
    vectors = {o.dataset.name: _vectors(o) for o in outcomes}
    return {
        name: replace(
            replace(info, fingerprint=asdict(scored[name])) if name in scored else info,
            vectors=vectors.get(name),
        )
        for name, info in manifest.datasets.items()
    }


def _vectors(outcome: DatasetOutcome) -> str | None:
    """Which document vectors the run's index holds (where vectors ship for the corpus)."""
    summary = outcome.index_summary
    if summary is None or not summary.vectors:
        return None
    return "; ".join(dict.fromkeys(summary.vectors.values()))


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
