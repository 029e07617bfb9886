"""``run_experiment``: connect, load the data, place every arm, execute, then assemble and publish
with the same steps (and the same run directory layout) as ``harness run``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console

from harness._errors import RunError
from harness.experiment._config import ExperimentConfig
from harness.experiment._execute import ArmSite, ExperimentOutcome, execute
from harness.experiment._resume import ArmCheckpoints, discard_if_bad_input, refuse_other
from harness.experiment._sweep import cost_line, sweep_fused
from harness.results import RunResults
from harness.run import (
    DatasetOutcome,
    DatasetPlan,
    PlannedArm,
    Publication,
    RunPlan,
    SweepOutcome,
    assemble,
    check_protocol,
    embedder_for,
    load_datasets,
    publish,
    start_manifest,
)
from harness.strategies import FusedArm, TemplateArm
from indexer import (
    SEARCH_TEMPLATE,
    Backend,
    CachedEmbedder,
    Capabilities,
    CapabilityMissing,
    ConfigError,
    ConnectionSettings,
    Dataset,
    IndexOptions,
    build_index,
    connect,
    judged_dataset,
)


class Clusters:
    """One backend per cluster the experiment names (the run's, and each arm's own), connected once."""

    def __init__(self, default: ConnectionSettings) -> None:
        self.default = default
        self.open: dict[str, Backend] = {}

    def get(self, settings: ConnectionSettings | None) -> Backend:
        chosen = settings or self.default
        if chosen.url not in self.open:
            self.open[chosen.url] = connect(chosen)
        return self.open[chosen.url]

    def close(self) -> None:
        for backend in self.open.values():
            backend.close()


def _datasets(exp: ExperimentConfig) -> list[Dataset]:
    if exp.queries is not None and exp.qrels is not None:
        return [judged_dataset(exp.run.datasets[0], exp.queries, exp.qrels)]
    return load_datasets(exp.run)


def _embedders(exp: ExperimentConfig) -> dict[str, CachedEmbedder]:
    """arm name -> the embedder of its model (one per model and query prompt)."""
    made: dict[tuple[str, str | None], CachedEmbedder] = {}
    out: dict[str, CachedEmbedder] = {}
    for arm in exp.arms:
        if arm.model is None:
            continue
        key = (arm.model, arm.query_prompt)
        if key not in made:
            made[key] = embedder_for(arm.model, exp.run, arm.query_prompt)
        out[arm.name] = made[key]
    return out


def _sites(
    exp: ExperimentConfig,
    ds: Dataset,
    clusters: Clusters,
    embedders: dict[str, CachedEmbedder],
    console: Console,
) -> dict[str, ArmSite]:
    """Every arm's backend and index: the one it names (it must exist), else the dataset's harness index."""
    built: dict[str, str] = {}
    sites: dict[str, ArmSite] = {}
    for i, arm in enumerate(exp.arms):
        backend = clusters.get(arm.connection)
        if arm.stored_template is not None and not backend.probe().has(SEARCH_TEMPLATE):
            why = backend.probe().missing.get(SEARCH_TEMPLATE, "the cluster has no search templates")
            raise CapabilityMissing(
                f"{exp.path}: arms[{i}].stored_template: {backend.url} cannot run stored search templates: "
                f"{why}. Write the template in the experiment (template or template_file): the harness renders it"
            )
        if arm.index is not None:
            if not backend.index_exists(arm.index):
                raise ConfigError(
                    f"{exp.path}: arms[{i}].index: expected an index or alias {arm.index!r} on {backend.url}, "
                    f"found none (arm {arm.name})"
                )
            sites[arm.name] = ArmSite(backend, arm.index, embedders.get(arm.name))
            continue
        if backend.url not in built:
            models = [embedders[a.name] for a in exp.arms if a.index is None and a.name in embedders]
            unique = list({e.spec.field_name: e for e in models}.values())
            options = IndexOptions(progress=exp.run.progress, analysis=exp.run.analysis)
            built[backend.url] = build_index(backend, ds, unique, options, console=console).alias
        sites[arm.name] = ArmSite(backend, built[backend.url], embedders.get(arm.name))
    return sites


def _identity(
    exp: ExperimentConfig,
    datasets: Sequence[Dataset],
    caps: Capabilities,
    embedders: dict[str, CachedEmbedder],
) -> dict[str, Any]:
    identity = exp.run.identity()
    identity["experiment"] = exp.identity()
    identity["fingerprints"] = {d.name: d.fingerprint.combined for d in datasets}
    identity["engine"] = {"product": caps.flavour, "version": caps.version}
    identity["models"] = {
        name: {**e.spec.identity(), "query_prompt": e.spec.query_prompt} for name, e in embedders.items()
    }
    return identity


def _plan(
    exp: ExperimentConfig,
    datasets: Sequence[Dataset],
    caps: Capabilities,
    embedders: dict[str, CachedEmbedder],
) -> RunPlan:
    arms = tuple(PlannedArm(a.name, a) for a in exp.arms) + tuple(PlannedArm(f.name, f) for f in exp.fused)
    identity = _identity(exp, datasets, caps, embedders)
    config_hash = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    run_dir = exp.run.output or Path("runs") / f"experiment-{exp.path.stem}-{config_hash}"
    model = next(iter(embedders.values())).spec if embedders else None
    plans = tuple(DatasetPlan(ds, None, arms) for ds in datasets)
    return RunPlan(exp.run, plans, model, identity, config_hash, run_dir)


def _outcome(
    dsplan: DatasetPlan, done: ExperimentOutcome, first: TemplateArm, sweep: SweepOutcome | None
) -> DatasetOutcome:
    """What the run's assemble and publish steps read: the first arm's index stands for the dataset's
    (records show its documents), the first fused arm's spec for the dataset's fusion (each arm's is in its target)."""
    fusions = [a.spec.fusion for a in dsplan.fused_arms if isinstance(a.spec, FusedArm)]
    return DatasetOutcome(
        dsplan,
        done.targets[first.name].index,
        {a.name: done.runs[a.name] for a in dsplan.arms},
        {a.name: done.evaluations[a.name] for a in dsplan.arms},
        fusions[0] if fusions else None,
        {},
        None,
        sweep=sweep,
    )


def _with_targets(results: RunResults, done: Sequence[ExperimentOutcome]) -> RunResults:
    by_name = {o.dataset.name: o for o in done}
    datasets = {
        name: replace(
            ds,
            arms={arm: replace(r, target=by_name[name].targets.get(arm)) for arm, r in ds.arms.items()},
        )
        for name, ds in results.datasets.items()
    }
    return replace(results, datasets=datasets, manifest=replace(results.manifest, fusion=None))


def _execute_all(
    exp: ExperimentConfig,
    plan: RunPlan,
    clusters: Clusters,
    embedders: dict[str, CachedEmbedder],
    console: Console,
) -> tuple[list[ExperimentOutcome], list[DatasetOutcome]]:
    """Every dataset's arms (finished ones read back from their checkpoints), sweeps and outcomes."""
    done, outcomes = [], []
    for dsplan in plan.datasets:
        sites = _sites(exp, dsplan.dataset, clusters, embedders, console)
        ckpt = ArmCheckpoints(plan.run_dir, dsplan.dataset, plan.config_hash)
        report = partial(console.print, highlight=False)
        done.append(execute(exp, dsplan.dataset, sites, console, report, ckpt))
        if ckpt.reused:
            report(f"resuming {plan.run_dir}: {ckpt.reused} arms reused ({dsplan.dataset.name})")
        sweep = sweep_fused(exp, done[-1], sites, console, plan.run_dir, plan.config_hash)
        outcomes.append(_outcome(dsplan, done[-1], exp.arms[0], sweep))
    return done, outcomes


def run_experiment(
    exp: ExperimentConfig, settings: ConnectionSettings, *, console: Console | None = None
) -> tuple[Path, RunResults]:
    """Run every arm of ``exp``; the run directory is written only once every arm has its run."""
    console = console or Console(stderr=True)
    clusters = Clusters(exp.connection or settings)
    try:
        return _run(exp, clusters, console)
    finally:
        clusters.close()


def _run(exp: ExperimentConfig, clusters: Clusters, console: Console) -> tuple[Path, RunResults]:
    main = clusters.get(None)
    caps = main.probe()
    datasets = _datasets(exp)
    embedders = _embedders(exp)
    plan = _plan(exp, datasets, caps, embedders)
    refuse_other(plan.run_dir, plan.config_hash)
    if exp.run.tuning is not None:  # a protocol the data cannot run fails before any search
        for ds in datasets:
            check_protocol(exp.run.tuning, ds)
            console.print(cost_line(exp, ds), highlight=False)
    existed = plan.run_dir.exists()
    try:
        done, outcomes = _execute_all(exp, plan, clusters, embedders, console)
    except (RunError, ConfigError) as exc:
        discard_if_bad_input(plan.run_dir, existed, exc)
        raise
    manifest = start_manifest(plan, clusters.default, caps)
    results = _with_targets(assemble(plan, outcomes, manifest), done)
    publish(Publication(plan.run_dir, results, outcomes), exp.run.sinks, main, main)
    return plan.run_dir, results
