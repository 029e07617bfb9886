"""Metric records: load samples and ANN sweep points, as documents for the engine (Kibana) and
``metrics.jsonl``, the way Rally's metrics store keeps one document per sample.

Both kinds share one index (``harness-metrics-*``) and are told apart by ``kind``; each has a
deterministic id, so writing a run again replaces its documents instead of adding copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.results._codec import decode, encode

LOAD_SAMPLE = "load_sample"
ANN_POINT = "ann_point"
METRICS_FILE = "metrics.jsonl"


@dataclass(frozen=True, slots=True)
class LoadSampleRecord:
    """One request of a load phase (warm-up ones included, marked ``sample_type: warmup``)."""

    timestamp: str = field(metadata={"json": "@timestamp"})
    run_id: str
    dataset: str
    arm: str
    engine: str
    operation: str
    seq: int
    client: int
    query_id: str
    sample_type: str  # "warmup" | "normal"
    relative_time_s: float
    service_time_ms: float
    latency_ms: float
    took_ms: float | None
    client_cpu_ms: float
    success: bool
    error_type: str | None
    clients: int
    target_throughput: float | None
    kind: str = LOAD_SAMPLE

    @property
    def id(self) -> str:
        return f"{self.run_id}|{self.dataset}|{self.arm}|load|{self.seq}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return data


@dataclass(frozen=True, slots=True)
class AnnPointRecord:
    """One ``--ann-sweep`` point."""

    timestamp: str = field(metadata={"json": "@timestamp"})
    run_id: str
    dataset: str
    engine: str
    index_type: str
    parameter: str
    candidates: int | None
    k: int
    recall_at_k: float
    ndcg_at_10: float
    service_p50_ms: float
    service_p99_ms: float
    latency_p50_ms: float
    latency_p99_ms: float
    throughput: float
    size_bytes: int
    frontier: bool
    index: str
    kind: str = ANN_POINT

    @property
    def id(self) -> str:
        return f"{self.run_id}|{self.dataset}|ann|{self.index_type}|{self.candidates}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return data


MetricRecord = LoadSampleRecord | AnnPointRecord
KINDS: dict[str, type[LoadSampleRecord] | type[AnnPointRecord]] = {
    LOAD_SAMPLE: LoadSampleRecord,
    ANN_POINT: AnnPointRecord,
}


def metric_from_json(data: Any, where: str = "metric") -> MetricRecord:
    """A record of ``metrics.jsonl`` by its ``kind``."""
    from harness._errors import RunError

    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in KINDS:
        raise RunError(f"{where}: expected a metric record with kind in {sorted(KINDS)}, found {kind!r}")
    record: MetricRecord = decode(KINDS[kind], data, where)
    return record
