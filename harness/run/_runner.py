"""``run``: plan, execute (checkpointed), assemble, publish: the steps of every ``harness run``, in order.

Whether the experiment came from a mode and flags or from a file, connecting (the backend of whichever
engine answers), probing, choosing the analysis chain and building the embedders and the reranker happen
here, once, from the typed experiment; the CLI only builds the experiment and prints what comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from base import EngineUnavailable, HarnessError, quiet
from harness._errors import RunError
from harness.eval import warm_ranx
from harness.experiment import Experiment
from harness.rerank import Reranker, make_reranker
from harness.results import RunResults
from harness.run._assemble import assemble, start_manifest
from harness.run._checkpoints import Checkpoints, discard_if_bad_input
from harness.run._execute import Executor
from harness.run._perf import EngineOpener, publish_metrics, run_performance
from harness.run._plan import RunPlan, experiment_arms, plan_run
from harness.run._publish import Publication, publish, write_manifest
from harness.run._sites import BUILTIN, Clusters, embedder_for, embedders
from harness.run._steps import run_dataset
from harness.run._tuning import sweep_task
from indexer import (
    CachedEmbedder,
    Capabilities,
    ConnectionSettings,
    Dataset,
    ModelSpec,
    adopt_bundled,
    choose_analysis,
    connect,
)


def run(
    exp: Experiment, settings: ConnectionSettings | None = None, *, console: Console | None = None
) -> tuple[Path, RunResults]:
    """Run ``exp`` against its cluster (``settings``: another one); returns the run directory and results."""
    console = console or Console(stderr=True)
    settings = settings or exp.connection_settings()
    backend = connect(settings)
    clusters = Clusters(backend, settings)
    try:
        with quiet(exp.output.quiet):  # --quiet: no progress display anywhere below, whatever asks for one
            return _run(exp, clusters, console)
    except EngineUnavailable as exc:  # the connection dropped outside the retried bulk and msearch paths
        raise RunError(
            f"lost the connection to {backend.product} at {settings.url} during the run: {exc}. "
            "Arms finished so far are checkpointed in the run directory; the same command resumes from them"
        ) from None
    finally:
        clusters.close()
        backend.close()


def engine_line(caps: Capabilities, notices: Sequence[str]) -> str | None:
    """The first screen's one line on what this cluster lacks (a plugin, an analyzer, a licensed retriever:
    the probe's notes, and the arms skipped for it), or None; the report lists each (report.md)."""
    counts = [(len(notices), "arm", " skipped"), (len(caps.notes), "fallback", "")]
    said = [f"{n} {word}{'s' if n > 1 else ''}{tail}" for n, word, tail in counts if n]
    if not said:
        return None
    version = caps.version or "serverless"
    return f"note: {caps.flavour} {version} lacks some features: {', '.join(said)} (report.md: which)"


def _plan(
    exp: Experiment, caps: Capabilities, console: Console
) -> tuple[RunPlan, dict[str, CachedEmbedder], Reranker | None]:
    """The plan, the arms' embedders and the reranker; the cost of every sweep said before any work."""
    # a user mapping brings its own analysis (its label names the body's hash)
    analysis = exp.user_mapping.label if exp.user_mapping else choose_analysis(caps, exp.index.analysis)
    arms, _ = experiment_arms(exp, caps)
    embedded = embedders(exp, arms)
    spec = exp.rerank_spec
    reranker = make_reranker(spec, lambda model: embedder_for(model, exp)) if spec is not None else None

    def models(datasets: Sequence[Dataset]) -> dict[str, ModelSpec]:
        # auto takes the numerics of vectors shipped for every corpus it would embed (the sample's): no check
        adopt_bundled(embedded.values(), [d.fingerprint.corpus for d in datasets])
        return {name: e.spec for name, e in embedded.items()}

    plan = plan_run(exp, caps, models, reranker.identity if reranker else None, analysis=analysis)
    for note in caps.notes if caps.serverless else ():  # said once: which APIs a serverless service is spared
        if note.startswith("serverless mode"):
            console.print(f"note: {note}", style="dim", highlight=False, soft_wrap=True)
    line = engine_line(caps, plan.notices)
    if line is not None:
        console.print(line, style="dim", highlight=False, soft_wrap=True)
    for dsplan in plan.datasets:  # what a judgments source made before the search (a click model's judgments)
        for line in dsplan.judged.notes if dsplan.judged is not None else ():
            console.print(f"{dsplan.dataset.name}: {line}", highlight=False, soft_wrap=True)
    costs = Console(stderr=True, soft_wrap=True)  # said on stderr, before any work
    for dsplan in plan.datasets:
        task = sweep_task(exp, dsplan)
        if task is not None:  # a protocol the data cannot run fails here
            costs.print(task.cost_line(dsplan.dataset), highlight=False)
    return plan, embedded, reranker


def _run(exp: Experiment, clusters: Clusters, console: Console) -> tuple[Path, RunResults]:
    backend = clusters.main
    # ranx imported and its kernels compiled on a thread while the engine is probed, the data planned and
    # the index built, not after the last search (harness/eval/_warm.py)
    warm_ranx([exp.fusion], exp.stats.measures)
    caps = backend.probe()
    plan, embedded, reranker = _plan(exp, caps, console)
    Checkpoints(plan.run_dir, plan.config_hash).claim()  # another configuration's directory is refused
    existed = plan.run_dir.exists()
    manifest = start_manifest(plan, clusters.settings, caps)
    write_manifest(plan.run_dir, manifest)
    console.print(f"run {plan.run_id} → {plan.run_dir}", highlight=False)
    engine = EngineOpener(clusters.settings, exp.output.records_url, searched=backend)  # metric records
    try:
        executor = Executor(plan, clusters, embedded, caps, console, reranker)
        try:
            outcomes = [
                run_performance(exp, run_dataset(executor, d), embedded.get(BUILTIN), caps, console)
                for d in plan.datasets
            ]
        except HarnessError as exc:
            discard_if_bad_input(plan.run_dir, existed, exc)
            raise
        results = assemble(plan, outcomes, manifest)
        sinks = exp.output.sinks
        publish_metrics(plan.run_dir, results, outcomes, sinks, engine.records)
        records = engine.records() if "es" in sinks else backend
        publish(Publication(plan.run_dir, results, outcomes), sinks, backend, records)
    finally:
        engine.close()
    return plan.run_dir, results
