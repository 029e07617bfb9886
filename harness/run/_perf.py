"""The performance phases of a run, after its relevance pass: ANN recall, the load phase, the sweep.

Every arm's bodies are rebuilt from the plan the relevance pass ran (the same strategies, the
same query inputs: texts and cached query vectors), so the load phase replays exactly what
was scored. Search arms replay one ``_search`` per query; a client-side fused arm replays one
``_msearch`` of its inputs' searches per query (its fusion is client work, timed in the
relevance pass); reranked arms have no load (the reranker is local model work).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from harness.ann import DocumentVectors, SweepInputs, ann_recall, document_vectors, run_sweep
from harness.load import (
    LoadOptions,
    LoadRun,
    MultiSearchOperation,
    Operation,
    SearchOperation,
    run_load,
    summarize,
)
from harness.results import (
    AnnPointRecord,
    AnnRecall,
    AnnSweep,
    DatasetResult,
    LoadResult,
    LoadSampleRecord,
    MetricRecord,
    RunResults,
)
from harness.run._config import RunConfig
from harness.run._execute import DatasetOutcome, Executor
from harness.sinks import METRIC_SINKS, MetricTarget
from harness.strategies import FusedArm, QueryInput, SearchArm, Vector
from indexer import Backend, ConnectionSettings, connect


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


#: the sweep's own load when the run has no --load: one pass over the queries, one client
SWEEP_LOAD = LoadOptions(clients=1, iterations=1, warmup_s=1.0)


@dataclass(slots=True)
class DatasetPerformance:
    """What the performance phases measured on one dataset."""

    load: dict[str, LoadResult] = field(default_factory=dict)
    ann: dict[str, AnnRecall] = field(default_factory=dict)
    sweep: AnnSweep | None = None
    samples: dict[str, LoadRun] = field(default_factory=dict)  # arm -> every request (metrics records)


def wanted(cfg: RunConfig) -> bool:
    return cfg.load is not None or cfg.ann_recall or cfg.ann_sweep is not None


def _arm_inputs(executor: Executor, outcome: DatasetOutcome) -> dict[str, list[QueryInput]]:
    """Each search arm's query inputs, as the relevance pass built them (query vectors from the cache)."""
    labels: dict[str, Any] = {}
    for arm in outcome.plan.search_arms:
        labels.setdefault(arm.expansion.label if arm.expansion else "", arm.expansion)
    cache = {label: executor._query_inputs(outcome.dataset, exp, {}) for label, exp in labels.items()}
    return {arm.name: cache[arm.expansion.label if arm.expansion else ""] for arm in outcome.plan.search_arms}


def _bodies(
    executor: Executor, outcome: DatasetOutcome, inputs: Mapping[str, list[QueryInput]]
) -> dict[str, tuple[dict[str, Any], ...]]:
    # the in-engine sum is timed with the weights it ran with (k-fold: the first fold's)
    ctx = executor._context(outcome.sum_weights or next(iter(outcome.sum_fold_weights), None))
    out = {}
    for arm in outcome.plan.search_arms:
        assert isinstance(arm.spec, SearchArm)
        strategy = arm.spec.strategy(ctx)
        out[arm.name] = tuple(strategy.body(q) for q in inputs[arm.name])
    return out


def _operations(
    backend: Backend,
    outcome: DatasetOutcome,
    inputs: Mapping[str, list[QueryInput]],
    bodies: Mapping[str, tuple[dict[str, Any], ...]],
) -> dict[str, tuple[Operation, str]]:
    ops: dict[str, tuple[Operation, str]] = {}
    for arm in outcome.plan.arms:
        if isinstance(arm.spec, SearchArm):
            qids = tuple(q.qid for q in inputs[arm.name])
            ops[arm.name] = (SearchOperation(backend, outcome.index, qids, bodies[arm.name]), "")
        elif isinstance(arm.spec, FusedArm):
            first = inputs[arm.inputs[0]]
            per_query = tuple(tuple(bodies[name][i] for name in arm.inputs) for i in range(len(first)))
            name = f"msearch({'+'.join(arm.inputs)})"
            note = (
                f"one msearch of its inputs' searches ({', '.join(arm.inputs)}) per query; the client-side "
                "fusion after it is not included (timed in the relevance pass)"
            )
            ops[arm.name] = (
                MultiSearchOperation(backend, outcome.index, tuple(q.qid for q in first), per_query, name),
                note,
            )
    return ops


def _vector_arms(outcome: DatasetOutcome) -> list[str]:
    return [
        a.name
        for a in outcome.plan.search_arms
        if isinstance(a.spec, SearchArm) and issubclass(a.spec.strategy, Vector)
    ]


def run_performance(
    executor: Executor, outcome: DatasetOutcome, open_engine: Callable[[], Backend], console: Console
) -> DatasetOutcome:
    """``outcome`` with its performance phases measured (when the run asks for any)."""
    if wanted(executor.config):

        def say(line: str) -> None:
            console.print(line, highlight=False, markup=False)

        outcome.performance = measure(executor, outcome, open_engine, say)
    return outcome


def measure(
    executor: Executor,
    outcome: DatasetOutcome,
    open_engine: Callable[[], Backend],
    say: Callable[[str], None],
) -> DatasetPerformance:
    """ANN recall of the vector arms, then each arm's load phase, then the sweep (each as configured)."""
    cfg = executor.config
    perf = DatasetPerformance()
    inputs = _arm_inputs(executor, outcome)
    vector_arms = _vector_arms(outcome) if executor.embedder is not None else []
    docs: DocumentVectors | None = None
    if vector_arms and (cfg.ann_recall or cfg.ann_sweep is not None):
        assert executor.embedder is not None
        docs = document_vectors(executor.embedder, outcome.dataset)
    if docs is not None and cfg.ann_recall:
        for name in vector_arms:
            qids = [q.qid for q in inputs[name]]
            vectors = np.asarray([q.vector for q in inputs[name]], dtype=np.float32)
            perf.ann[name] = ann_recall(outcome.runs[name].run, qids, vectors, docs, (10, cfg.depth))
            say(f"{outcome.dataset.name} {name}: ANN recall {perf.ann[name].recall}")
    if cfg.load is not None:
        bodies = _bodies(executor, outcome, inputs)
        for name, (op, note) in _operations(open_engine(), outcome, inputs, bodies).items():
            say(f"load phase: {outcome.dataset.name} {name} ({op.name}, {cfg.load.describe()})")
            run = run_load(op, cfg.load)
            perf.samples[name] = run
            perf.load[name] = summarize(run, note)
    if cfg.ann_sweep is not None and docs is not None:
        plain = next(n for n in vector_arms if not n.count("+"))
        sweep_inputs = SweepInputs(
            outcome.dataset.name,
            docs,
            tuple(q.qid for q in inputs[plain]),
            np.asarray([q.vector for q in inputs[plain]], dtype=np.float32),
            outcome.dataset.qrels,
        )
        settings = cfg.ann_sweep.resolve(executor.caps)
        perf.sweep = run_sweep(open_engine(), sweep_inputs, settings, cfg.load or SWEEP_LOAD, say=say)
    return perf


# ---------------------------------------------------------------------------- results and records


def performance_settings(config: RunConfig, outcomes: Sequence[DatasetOutcome]) -> dict[str, Any]:
    """The manifest's record of the performance phases (``load``, ``ann_sweep``), for reproducing them."""
    sweeps = [o.performance.sweep for o in outcomes if o.performance is not None and o.performance.sweep]
    return {
        "load_phase": config.load.settings() if config.load is not None else None,
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
