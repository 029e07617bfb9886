"""``[sweep]``: an experiment's fused arm tuned over a joint grid, every query scored held out.

The grid is the fusion grid (``grid``: method x normalisation x weights x k) times, with
``[sweep.params]``, the template parameters of the arm's inputs (:class:`~harness.sweep.ParamGrid`):
each input arm is searched once per distinct setting (:mod:`._settings`, checkpointed), and every
configuration selects its settings' runs and fuses them. Each configuration is scored per query,
as with ``harness run hybrid --tune-on`` (:mod:`harness.run._sweep`, :mod:`harness.sweep`): with
``kfold[:K]`` each fold's queries are ranked by the configuration chosen on the other folds, with
``train`` by the one chosen on the train split (whose queries the input arms search first). The
fused arm's run, metrics and tests are then the held-out ones; the in-sample best is kept beside
them, as optimistic. The cost (configurations x queries, and the searches of the param grid) is
said before any work (:func:`cost_line`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from harness._search import ArmRun
from harness.eval import PRIMARY_MEASURE, evaluate
from harness.experiment._config import ExperimentConfig
from harness.experiment._execute import ArmSite, ExperimentOutcome, render_all, search_arm
from harness.experiment._resume import ArmCheckpoints
from harness.experiment._settings import search_settings
from harness.results import ArmTarget
from harness.run import SweepOutcome, check_protocol, kfold_selection, score_matrix
from harness.strategies import FusedArm
from harness.sweep import (
    Configuration,
    JointGrid,
    ParamPoint,
    Selection,
    SweepContext,
    SweepSpec,
    grid,
    select,
    variant_key,
)
from indexer import Dataset, slug

FUSION = "fusion"
#: where the param grid's runs are checkpointed, under the run directory
SETTINGS_DIR = "sweep"


def grid_of(exp: ExperimentConfig) -> SweepSpec | JointGrid | None:
    """The grid ``[sweep]`` chooses from: its ``grid`` (default: the swept arm's own method's parameters;
    with ``[sweep.params]`` alone, the arm's fusion as written), times ``[sweep.params]``."""
    arm = exp.swept_arm
    if arm is None or exp.run.tuning is None:
        return None
    assert arm.fusion is not None
    if isinstance(exp.run.sweep, SweepSpec):
        fusion = exp.run.sweep
    else:
        fusion = SweepSpec.fixed(arm.fusion) if exp.params is not None else SweepSpec.for_method(arm.fusion)
    return JointGrid(fusion, exp.params) if exp.params is not None else fusion


def _configs(spec: SweepSpec | JointGrid, ctx: SweepContext) -> dict[str, Configuration]:
    specs = spec.specs() if isinstance(spec, JointGrid) else {FUSION: spec}
    return {c.label: c for c in grid(specs, ctx)}


def cost_line(exp: ExperimentConfig, ds: Dataset) -> str | None:
    """What ``ds``'s sweep will cost, said before any work: rankings scored, and searches of the param grid."""
    arm, spec, tuning = exp.swept_arm, grid_of(exp), exp.run.tuning
    if arm is None or spec is None or tuning is None:
        return None
    n = len(_configs(spec, SweepContext(arm.inputs, arm.name, exp.run.depth)))
    queries = len(ds.queries)
    train = check_protocol(tuning, ds)
    if tuning.folds is not None:
        how = f"{tuning}: {tuning.folds} folds, each chosen on the others"
    else:
        how = f"chosen on {tuning.split} ({train} queries), scored on {ds.split or 'test'} ({queries})"
    line = (
        f"sweep of {arm.name} on {ds.name}: {n:,} configurations x {queries + train} queries = "
        f"{n * (queries + train):,} rankings scored on {PRIMARY_MEASURE.key} ({how}); grid {spec}"
    )
    if exp.params is not None:
        settings = sum(len(exp.params.settings(a)) for a in exp.params.arms)
        line += (
            f"; the param grid searches {settings} arm settings x {queries + train} queries = "
            f"{exp.params.searches(queries + train):,} searches (checkpointed, reused by every fusion)"
        )
    return line


def _runs(
    exp: ExperimentConfig,
    arm: FusedArm,
    ds: Dataset,
    base: Mapping[str, ArmRun],
    sites: Mapping[str, ArmSite],
    where: tuple[Path, str],
    console: Console,
) -> dict[str, ArmRun]:
    """The swept arm's inputs on ``ds`` (``base``), and with [sweep.params] each setting's run."""
    runs = {name: base[name] for name in arm.inputs}
    if exp.params is not None:
        folder, config_hash = where
        found = search_settings(
            exp, exp.params, ds, sites, folder / slug(ds.split or "test"), config_hash, console
        )
        console.print(
            f"sweep of {arm.name} on {ds.name}/{ds.split or 'test'}: {found.searches:,} searches sent, "
            f"{found.loaded} settings from checkpoints",
            highlight=False,
        )
        runs.update(found.runs)
    return runs


def _parts(config: Configuration, arm: FusedArm, runs: Mapping[str, ArmRun]) -> list[ArmRun]:
    """The runs a configuration ranks from: each input's, or its chosen setting's."""
    point = config.value("params")
    settings = dict(point.settings) if isinstance(point, ParamPoint) else {}
    return [runs[variant_key(n, settings[n])] if n in settings else runs[n] for n in arm.inputs]


def held_out_run(
    arm: FusedArm,
    selection: Selection,
    configs: Mapping[str, Configuration],
    runs: Mapping[str, ArmRun],
    depth: int,
) -> ArmRun:
    """The swept arm's run with each fold's queries ranked by the configuration chosen without them
    (their latency: the chosen settings' searches)."""
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


def _train_base(
    exp: ExperimentConfig,
    arm: FusedArm,
    train: Dataset,
    sites: Mapping[str, ArmSite],
    console: Console,
    where: tuple[Path, str],
) -> dict[str, ArmRun]:
    """The swept arm's inputs on the train split: from their checkpoints, else searched and checkpointed
    (``RUN_DIR/arms/<dataset>/<train split>/``, as the test split's arms)."""
    ckpt = ArmCheckpoints(where[0], train, where[1])
    searched = [a for a in exp.arms if a.name in arm.inputs]
    base = {a.name: found[0] for a in searched if (found := ckpt.get(a.name)) is not None}
    todo = [a for a in searched if a.name not in base]
    requests = render_all(exp, todo, train, sites)
    for a in todo:
        base[a.name] = search_arm(a, sites[a.name], requests[a.name], exp, console)
        ckpt.put(a.name, base[a.name], ArmTarget())
    return base


def sweep_fused(
    exp: ExperimentConfig,
    done: ExperimentOutcome,
    sites: Mapping[str, ArmSite],
    console: Console,
    run_dir: Path,
    config_hash: str,
) -> SweepOutcome | None:
    """Tune the swept arm held out; its run, evaluation and target in ``done`` become the held-out ones."""
    arm, spec, tuning = exp.swept_arm, grid_of(exp), exp.run.tuning
    if arm is None or spec is None or tuning is None:
        return None
    ds, depth, progress = done.dataset, exp.run.depth, exp.run.progress
    where = (run_dir / SETTINGS_DIR / slug(ds.name), config_hash)
    ctx = SweepContext(arm.inputs, arm.name, depth)
    configs = _configs(spec, ctx)
    runs = _runs(exp, arm, ds, done.runs, sites, where, console)
    score = score_matrix(
        list(configs.values()), ctx, {n: r.run for n, r in runs.items()}, ds, console, progress
    )
    if tuning.folds is not None:
        selection = kfold_selection(score, tuning.folds, exp.run.seed)
    else:
        assert tuning.split is not None
        train = ds.with_split(tuning.split)
        base = _train_base(exp, arm, train, sites, console, (run_dir, config_hash))
        on_train = _runs(exp, arm, train, base, sites, where, console)
        choose = score_matrix(
            list(configs.values()), ctx, {n: r.run for n, r in on_train.items()}, train, console, progress
        )
        selection = select(choose, score, [(sorted(train.queries), sorted(next(iter(score.values()))))])
    held = {arm.name: held_out_run(arm, selection, configs, runs, depth)}
    done.runs.update(held)
    done.evaluations[arm.name] = evaluate(ds.qrels, held[arm.name].run, exp.run.measures)
    done.targets[arm.name] = replace(done.targets[arm.name], fusion=f"held out ({tuning}) over {spec}")
    console.print(
        f"sweep of {arm.name}: held-out {PRIMARY_MEASURE.key} {selection.held_out:.4f}; in-sample best "
        f"{selection.in_sample_score:.4f} ({selection.in_sample_best}, optimistic)",
        highlight=False,
    )
    return SweepOutcome(arm.name, tuning, spec, selection, configs, held)
