"""``run``: plan, execute, assemble, publish, the four steps of ``harness run`` in order.

Connecting (the backend of whichever engine answers), probing, choosing the analysis chain
and building the embedder happen here, once, from the typed config; the CLI only builds the
config and prints what comes back.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from harness._errors import RunError
from harness.rerank import make_reranker
from harness.results import Manifest, RunResults
from harness.run._assemble import assemble, start_manifest
from harness.run._config import RunConfig
from harness.run._execute import Executor
from harness.run._perf import EngineOpener, publish_metrics, run_performance
from harness.run._plan import RunPlan, mode_arms, needs_vectors, plan_run
from harness.run._publish import MANIFEST_FILE, Publication, publish, write_manifest
from harness.run._sweep import cost_lines
from indexer import (
    Backend,
    CachedEmbedder,
    Capabilities,
    ConfigError,
    ConnectionSettings,
    EmbeddingCache,
    EngineUnavailable,
    build_encoder,
    choose_analysis,
    connect,
    endpoint_for,
    resolve_model,
)


def embedder_for(
    model: str, config: RunConfig, query_prompt: str | None = None, document_prompt: str | None = None
) -> CachedEmbedder:
    """A cached embedder for ``model`` with the run's endpoint, embedding backend and remote-code consent."""
    spec = resolve_model(
        model,
        query_prompt=query_prompt,
        document_prompt=document_prompt,
        trust_remote_code=config.trust_remote_code,
    )
    cache = EmbeddingCache()
    endpoint = endpoint_for([model], config.base_url, config.api_key_env)
    return CachedEmbedder(
        build_encoder(
            spec, endpoint=endpoint, cache=cache, backend=config.embed_backend, progress=config.progress
        ),
        cache,
    )


def _embedder(config: RunConfig, caps: Capabilities) -> CachedEmbedder | None:
    arms, _ = mode_arms(config.mode, caps)
    if not needs_vectors(arms):
        return None
    return embedder_for(config.model, config, config.query_prompt, config.document_prompt)


def check_resume(plan: RunPlan, console: Console) -> None:
    """A run directory is resumed only by the same configuration."""
    existing = plan.run_dir / MANIFEST_FILE
    if not existing.is_file():
        return
    old = Manifest.load(existing)
    if old.config_hash != plan.config_hash:
        raise ConfigError(
            f"{plan.run_dir} holds a run with another configuration (config hash {old.config_hash}, "
            f"this one {plan.config_hash}); choose another --output"
        )
    console.print(f"resuming {plan.run_dir}: finished arms are reused", highlight=False)


def run(
    config: RunConfig, settings: ConnectionSettings, *, console: Console | None = None
) -> tuple[Path, RunResults]:
    """Run ``config`` against the cluster of ``settings``; returns the run directory and its results."""
    console = console or Console(stderr=True)
    backend = connect(settings)
    try:
        return _run(config, settings, backend, console)
    except EngineUnavailable as exc:  # the connection dropped outside the retried bulk and msearch paths
        raise RunError(
            f"lost the connection to {backend.product} at {settings.url} during the run: {exc}. "
            "Arms finished so far are checkpointed in the run directory; the same command resumes from them"
        ) from None
    finally:
        backend.close()


def _run(
    config: RunConfig, settings: ConnectionSettings, backend: Backend, console: Console
) -> tuple[Path, RunResults]:
    caps = backend.probe()
    for note in caps.notes:  # what this cluster lacks (a plugin, an analyzer; a 2.x OpenSearch says so)
        console.print(f"note: {caps.flavour} {caps.version}: {note}", style="dim", highlight=False)
    # a user mapping brings its own analysis (its label names the body's hash)
    analysis = config.user_mapping.label if config.user_mapping else choose_analysis(caps, config.analysis)
    embedder = _embedder(config, caps)
    spec = config.rerank_spec
    reranker = make_reranker(spec, lambda model: embedder_for(model, config)) if spec is not None else None
    plan = plan_run(
        config,
        caps,
        embedder.spec if embedder else None,
        reranker.identity if reranker else None,
        analysis=analysis,
    )
    for notice in plan.notices:
        console.print(f"notice: {notice}", style="dim", highlight=False)
    costs = Console(
        stderr=True, soft_wrap=True
    )  # the cost of --tune-on's sweep, said on stderr before any work
    for line in cost_lines(plan):
        costs.print(line, highlight=False)
    check_resume(plan, console)
    manifest = start_manifest(plan, settings, caps)
    write_manifest(plan.run_dir, manifest)
    console.print(f"run {plan.run_id} → {plan.run_dir}", highlight=False)
    engine = EngineOpener(settings, config.records_url, searched=backend)  # load/ANN phases, metrics
    try:
        executor = Executor(backend, plan, embedder, caps, console, reranker)
        outcomes = [
            run_performance(executor, executor.run_dataset(d), engine.searched, console)
            for d in plan.datasets
        ]
        results = assemble(plan, outcomes, manifest)
        publish_metrics(plan.run_dir, results, outcomes, config.sinks, engine.records)
        records = engine.records() if "es" in config.sinks else backend
        publish(Publication(plan.run_dir, results, outcomes), config.sinks, backend, records)
    finally:
        engine.close()
    return plan.run_dir, results
