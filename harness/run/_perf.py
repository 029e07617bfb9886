"""The performance phases of a run, after its relevance pass: ANN recall, the load phase, the sweep.

Every arm's bodies are rebuilt from the plan the relevance pass ran (the same strategies, the
same query inputs: texts and cached query vectors), so the load phase replays exactly what
was scored. Search arms (built-in and template arms) replay one ``_search`` per query on their own
site; a client-side fused arm replays one ``_msearch`` of its inputs' searches per query (its fusion is
client work, timed in the relevance pass); reranked arms have no load (the reranker is local model work).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from harness.ann import DocumentVectors, SweepInputs, ann_recall, document_vectors, run_sweep
from harness.experiment import Experiment
from harness.load import LoadOptions, MultiSearchOperation, Operation, SearchOperation, run_load, summarize
from harness.results import AnnPointRecord, DatasetResult, LoadSampleRecord, MetricRecord, RunResults
from harness.run._arms import QueryInputs, bodies, context, pipeline_of
from harness.run._outcome import DatasetOutcome, DatasetPerformance
from harness.run._plan import PlannedArm
from harness.run._sites import ArmSite, Sites
from harness.sinks import METRIC_SINKS, MetricTarget
from harness.strategies import FusedArm, QueryInput, SearchArm, TemplateArm, Vector
from indexer import Backend, CachedEmbedder, Capabilities, ConnectionSettings, connect


class EngineOpener:
    """Backends opened on first use (the load and ANN phases, the metric records) and closed together."""

    def __init__(
        self, settings: ConnectionSettings, records_url: str | None = None, *, searched: Backend | None = None
    ) -> None:
        self.settings, self.records_url = settings, records_url
        self._given = {settings.url: searched} if searched is not None else {}  # the caller closes these
        self._opened: dict[str, Backend] = {}

    def _open(self, url: str) -> Backend:
        if url in self._given:
            return self._given[url]
        if url not in self._opened:
            self._opened[url] = connect(self.settings.with_url(url))
        return self._opened[url]

    def searched(self) -> Backend:
        return self._open(self.settings.url)

    def records(self) -> Backend:
        """The cluster that takes records: ``--records-url``, else the searched one."""
        return self._open(self.records_url or self.settings.url)

    def close(self) -> None:
        for backend in self._opened.values():
            backend.close()
        self._opened.clear()


#: the sweep's own load when the run has no load phase: one pass over the queries, one client
SWEEP_LOAD = LoadOptions(clients=1, iterations=1, warmup_s=1.0)


def wanted(exp: Experiment) -> bool:
    return exp.load.enabled or exp.ann.recall or exp.ann.sweep


def _arm_inputs(outcome: DatasetOutcome, sites: Sites) -> dict[str, list[QueryInput]]:
    """Each search arm's query inputs, as the relevance pass built them (query vectors from the cache)."""
    inputs = QueryInputs(outcome.dataset, {})
    return {
        a.name: inputs.of(a.expansion, sites.by_arm[a.spec.name].embedder) for a in outcome.plan.search_arms
    }


def _bodies(
    exp: Experiment, outcome: DatasetOutcome, sites: Sites, inputs: Mapping[str, list[QueryInput]]
) -> dict[str, tuple[dict[str, Any], ...]]:
    # the in-engine sum is timed with the weights it ran with (k-fold: the first fold's)
    weights = outcome.sum_weights or next(iter(outcome.sum_fold_weights), None)
    out = {}
    for arm in outcome.plan.search_arms:
        site = sites.by_arm[arm.spec.name]
        out[arm.name] = tuple(
            bodies(arm, context(exp, site, weights), site, inputs[arm.name], pipeline_of(arm, exp))
        )
    return out


def _site(outcome: DatasetOutcome, sites: Sites, name: str) -> ArmSite:
    """The site of the arm ``name`` of this run (an expanded variant searches where its arm does)."""
    spec = next(a.spec.name for a in outcome.plan.arms if a.name == name)
    return sites.by_arm[spec]


def _fused_operation(
    outcome: DatasetOutcome,
    arm: PlannedArm,
    sites: Sites,
    inputs: Mapping[str, list[QueryInput]],
    bodies_of: Mapping[str, tuple[dict[str, Any], ...]],
) -> tuple[Operation, str] | None:
    """A client-side fused arm: one msearch of its inputs' searches per query (all on one site), or None."""
    if any(n not in bodies_of for n in arm.inputs):
        return None
    where = {(_site(outcome, sites, n).backend.url, _site(outcome, sites, n).index) for n in arm.inputs}
    if len(where) != 1:
        return None
    site = _site(outcome, sites, arm.inputs[0])
    first = inputs[arm.inputs[0]]
    per_query = tuple(tuple(bodies_of[name][i] for name in arm.inputs) for i in range(len(first)))
    note = (
        f"one msearch of its inputs' searches ({', '.join(arm.inputs)}) per query; the client-side "
        "fusion after it is not included (timed in the relevance pass)"
    )
    op = MultiSearchOperation(
        site.backend, site.index, tuple(q.qid for q in first), per_query, f"msearch({'+'.join(arm.inputs)})"
    )
    return op, note


def _operations(
    outcome: DatasetOutcome,
    sites: Sites,
    inputs: Mapping[str, list[QueryInput]],
    bodies_of: Mapping[str, tuple[dict[str, Any], ...]],
) -> dict[str, tuple[Operation, str]]:
    """What the load phase replays per arm (reranked arms have none: the reranker is local model work;
    a stored template is rendered by the engine's template endpoint, not replayed here)."""
    ops: dict[str, tuple[Operation, str]] = {}
    for arm in outcome.plan.arms:
        stored = isinstance(arm.spec, TemplateArm) and arm.spec.stored_template is not None
        if arm.searched and not stored:
            site = sites.by_arm[arm.spec.name]
            qids = tuple(q.qid for q in inputs[arm.name])
            ops[arm.name] = (SearchOperation(site.backend, site.index, qids, bodies_of[arm.name]), "")
        elif isinstance(arm.spec, FusedArm):
            found = _fused_operation(outcome, arm, sites, inputs, bodies_of)
            if found is not None:
                ops[arm.name] = found
    return ops


def _vector_arms(outcome: DatasetOutcome) -> list[str]:
    return [
        a.name
        for a in outcome.plan.search_arms
        if isinstance(a.spec, SearchArm) and issubclass(a.spec.strategy, Vector)
    ]


def run_performance(
    exp: Experiment,
    outcome: DatasetOutcome,
    embedder: CachedEmbedder | None,
    caps: Capabilities,
    console: Console,
) -> DatasetOutcome:
    """``outcome`` with its performance phases measured (when the run asks for any)."""
    if wanted(exp) and outcome.sites is not None:

        def say(line: str) -> None:
            console.print(line, highlight=False, markup=False)

        outcome.performance = measure(exp, outcome, outcome.sites, embedder, caps, say)
    return outcome


def measure(
    exp: Experiment,
    outcome: DatasetOutcome,
    sites: Sites,
    embedder: CachedEmbedder | None,
    caps: Capabilities,
    say: Callable[[str], None],
) -> DatasetPerformance:
    """ANN recall of the vector arms, then each arm's load phase, then the sweep (each as configured)."""
    perf = DatasetPerformance()
    inputs = _arm_inputs(outcome, sites)
    vector_arms = _vector_arms(outcome) if embedder is not None else []
    docs: DocumentVectors | None = None
    if vector_arms and (exp.ann.recall or exp.ann.sweep):
        assert embedder is not None
        summary = outcome.index_summary
        shipped = summary is not None and embedder.spec.field_name in summary.bundled
        docs = document_vectors(embedder, outcome.dataset, shipped=shipped)
    if docs is not None and exp.ann.recall:
        for name in vector_arms:
            qids = [q.qid for q in inputs[name]]
            vectors = np.asarray([q.vector for q in inputs[name]], dtype=np.float32)
            perf.ann[name] = ann_recall(outcome.runs[name].run, qids, vectors, docs, (10, exp.search.depth))
            shown = ", ".join(f"{k} {v:.4f}" for k, v in perf.ann[name].recall.items())
            say(f"{outcome.dataset.name} {name}: ANN recall against exact neighbours: {shown}")
    load = exp.load_options
    if load is not None:
        for name, (op, note) in _operations(
            outcome, sites, inputs, _bodies(exp, outcome, sites, inputs)
        ).items():
            say(f"load phase: {outcome.dataset.name} {name} ({op.name}, {load.describe()})")
            run = run_load(op, load)
            perf.samples[name] = run
            perf.load[name] = summarize(run, note)
    sweep = exp.ann_sweep
    if sweep is not None and docs is not None:
        plain = next(n for n in vector_arms if not n.count("+"))
        sweep_inputs = SweepInputs(
            outcome.dataset.name,
            docs,
            tuple(q.qid for q in inputs[plain]),
            np.asarray([q.vector for q in inputs[plain]], dtype=np.float32),
            outcome.dataset.qrels,
        )
        backend = _site(outcome, sites, plain).backend
        perf.sweep = run_sweep(backend, sweep_inputs, sweep.resolve(caps), load or SWEEP_LOAD, say=say)
    return perf


# ---------------------------------------------------------------------------- results and records


def performance_settings(exp: Experiment, outcomes: Sequence[DatasetOutcome]) -> dict[str, Any]:
    """The manifest's record of the performance phases (``load``, ``ann_sweep``), for reproducing them."""
    sweeps = [o.performance.sweep for o in outcomes if o.performance is not None and o.performance.sweep]
    load = exp.load_options
    return {
        "load_phase": load.settings() if load is not None else None,
        "ann_sweep": sweeps[0].settings if sweeps else None,
    }


def with_performance(result: DatasetResult, perf: DatasetPerformance | None) -> DatasetResult:
    """``result`` with its arms' load and ANN recall, and the sweep."""
    if perf is None:
        return result
    arms = {
        name: replace(arm, load=perf.load.get(name), ann=perf.ann.get(name))
        for name, arm in result.arms.items()
    }
    return replace(result, arms=arms, ann_sweep=perf.sweep)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


def metric_records(run_id: str, engine: str, dataset: str, perf: DatasetPerformance) -> list[MetricRecord]:
    """Every load sample and sweep point of one dataset as records (Rally's metrics store shape)."""
    out: list[MetricRecord] = []
    for arm, run in perf.samples.items():
        for seq, s in enumerate(run.samples):
            out.append(
                LoadSampleRecord(
                    timestamp=_iso(run.started_at + s.start_s),
                    run_id=run_id,
                    dataset=dataset,
                    arm=arm,
                    engine=engine,
                    operation=run.operation,
                    seq=seq,
                    client=s.client,
                    query_id=run.query_ids[s.query],
                    sample_type="warmup" if s.warmup else "normal",
                    relative_time_s=round(s.start_s, 6),
                    service_time_ms=round(s.service_ms, 4),
                    latency_ms=round(s.latency_ms, 4),
                    took_ms=s.took_ms,
                    client_cpu_ms=round(s.client_cpu_ms, 4),
                    success=s.ok,
                    error_type=s.error,
                    clients=run.options.clients,
                    target_throughput=run.options.target_throughput,
                )
            )
    if perf.sweep is not None:
        sweep = perf.sweep
        now = datetime.now(UTC).isoformat()
        for p in sweep.points:
            out.append(
                AnnPointRecord(
                    timestamp=now,
                    run_id=run_id,
                    dataset=dataset,
                    engine=engine,
                    index_type=p.index_type,
                    parameter=sweep.settings.parameter,
                    candidates=p.candidates,
                    k=sweep.settings.k,
                    recall_at_k=p.recall_at_k,
                    ndcg_at_10=p.ndcg_at_10,
                    service_p50_ms=p.service_time_ms.p50,
                    service_p99_ms=p.service_time_ms.p99,
                    latency_p50_ms=p.latency_ms.p50,
                    latency_p99_ms=p.latency_ms.p99,
                    throughput=p.throughput,
                    size_bytes=p.size_bytes,
                    frontier=p.frontier,
                    index=p.index,
                )
            )
    return out


def publish_metrics(
    run_dir: Path,
    results: RunResults,
    outcomes: Sequence[DatasetOutcome],
    sinks: Sequence[str],
    records_backend: Callable[[], Backend],
) -> int:
    """Load samples and sweep points to every sink of the run (``metrics.jsonl``, the engine)."""
    manifest = results.manifest
    engine = f"{manifest.engine.capabilities.flavour} {manifest.engine.version}"
    records = [
        r
        for o in outcomes
        if o.performance is not None
        for r in metric_records(manifest.run_id, engine, o.dataset.name, o.performance)
    ]
    if not records:
        return 0
    for name in sinks:
        target = MetricTarget(run_dir, records_backend() if name == "es" else None)
        METRIC_SINKS[name](target).write(records)
    return len(records)
