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
from harness.run._plan import RunPlan, mode_arms, needs_vectors, plan_run
from harness.run._publish import MANIFEST_FILE, Publication, publish, write_manifest
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


def _embedder(config: RunConfig, caps: Capabilities) -> CachedEmbedder | None:
    arms, _ = mode_arms(config.mode, caps)
    if not needs_vectors(arms):
        return None
    spec = resolve_model(config.model, query_prompt=config.query_prompt)
    cache = EmbeddingCache()
    endpoint = endpoint_for([config.model], config.base_url, config.api_key_env)
    return CachedEmbedder(build_encoder(spec, endpoint=endpoint, cache=cache), cache)


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


def _records_backend(config: RunConfig, settings: ConnectionSettings) -> Backend | None:
    """The cluster that takes the records, when it is not the searched one (``--records-url``)."""
    if config.records_url and "es" in config.sinks:
        return connect(settings.with_url(config.records_url))  # same credentials, another cluster
    return None


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
    analysis = choose_analysis(caps, config.analysis)
    embedder = _embedder(config, caps)
    spec = config.rerank_spec
    reranker = make_reranker(spec) if spec is not None else None
    plan = plan_run(
        config,
        caps,
        embedder.spec if embedder else None,
        reranker.identity if reranker else None,
        analysis=analysis,
    )
    for notice in plan.notices:
        console.print(f"notice: {notice}", style="dim", highlight=False)
    check_resume(plan, console)
    manifest = start_manifest(plan, settings, caps)
    write_manifest(plan.run_dir, manifest)
    console.print(f"run {plan.run_id} → {plan.run_dir}", highlight=False)
    executor = Executor(backend, plan, embedder, caps, console, reranker)
    outcomes = [executor.run_dataset(d) for d in plan.datasets]
    results = assemble(plan, outcomes, manifest)
    records = _records_backend(config, settings)
    try:
        publish(Publication(plan.run_dir, results, outcomes), config.sinks, backend, records or backend)
    finally:
        if records is not None:
            records.close()
    return plan.run_dir, results
