"""Typed results of the performance phases: the load phase (Rally's measures) and ANN quality.

``LoadResult`` is one arm's load phase: service time, latency (from the scheduled start when
the load had a target throughput), throughput, error rate and the engine's ``took``.
``AnnRecall`` is an arm's approximate kNN against exact nearest neighbours over the same
document vectors; ``AnnSweep`` the recall/latency/size points of ``--ann-sweep``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: Rally's latency percentiles (p99.9 is only meaningful past ~1,000 samples: ``requests`` says how many)
LOAD_PERCENTILES = (50.0, 90.0, 99.0, 99.9)


@dataclass(frozen=True, slots=True)
class Distribution:
    """Percentiles (linear interpolation), maximum and mean of a list of milliseconds (0 when empty)."""

    p50: float = 0.0
    p90: float = 0.0
    p99: float = 0.0
    p99_9: float = field(default=0.0, metadata={"json": "p99.9"})
    max: float = 0.0
    mean: float = 0.0

    @classmethod
    def of(cls, values: Sequence[float]) -> Distribution:
        if not values:
            return cls()
        arr = np.asarray(values, dtype=float)
        p50, p90, p99, p999 = (round(float(v), 3) for v in np.percentile(arr, LOAD_PERCENTILES))
        return cls(p50, p90, p99, p999, round(float(arr.max()), 3), round(float(arr.mean()), 3))


@dataclass(frozen=True, slots=True)
class LoadSettings:
    """How a load phase drove the engine (``harness run --load``)."""

    clients: int
    duration_s: float | None
    iterations: int | None
    target_throughput: float | None
    warmup_s: float
    timeout_s: float


@dataclass(frozen=True, slots=True)
class LoadResult:
    """One arm's load phase: single requests, one per query, the same bodies as the relevance pass.

    ``requests`` counts the measured requests (warm-up excluded), failed ones included;
    ``throughput`` is successful requests per second over the measured window; the
    distributions are over successful requests. ``client_cpu_ms`` is the CPU the sending
    thread spent per request (the harness's own overhead, beside the engine's ``took``).
    """

    operation: str
    clients: int
    target_throughput: float | None
    requests: int
    errors: int
    error_rate: float
    throughput: float
    duration_s: float
    service_time_ms: Distribution
    latency_ms: Distribution
    took_ms: Distribution
    client_cpu_ms: Distribution
    warmup_requests: int = 0
    error_types: dict[str, int] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True, slots=True)
class AnnRecall:
    """An arm's approximate kNN against the exact nearest neighbours of the same query vectors over
    the same document vectors: mean recall@k and per query (measure -> query id -> recall)."""

    exact: str  # how the exact neighbours were found, e.g. "client: numpy over 5183 cached vectors"
    recall: dict[str, float]
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)

    def at(self, k: int) -> float | None:
        return self.recall.get(f"recall@{k}")


@dataclass(frozen=True, slots=True)
class SweepSettings:
    """What ``--ann-sweep`` covers: index types x candidate counts, searched for the top ``k``."""

    index_types: tuple[str, ...]
    candidates: tuple[int, ...]
    k: int = 10
    m: int = 16
    ef_construction: int = 100
    parameter: str = "num_candidates"  # what the candidates are on this engine (OpenSearch: ef_search)


@dataclass(frozen=True, slots=True)
class AnnPoint:
    """One sweep point: an index type searched with one candidate count (None: exact, no parameter)."""

    index_type: str
    candidates: int | None
    recall_at_k: float = field(metadata={"json": "recall@k"})
    ndcg_at_10: float = field(metadata={"json": "ndcg@10"})
    service_time_ms: Distribution
    latency_ms: Distribution
    throughput: float
    size_bytes: int
    index: str
    errors: int = 0
    frontier: bool = False  # on the recall-latency Pareto frontier (no point faster with higher recall)

    @property
    def label(self) -> str:
        return self.index_type if self.candidates is None else f"{self.index_type}@{self.candidates}"


@dataclass(frozen=True, slots=True)
class AnnSweep:
    """The sweep of one dataset: every point, built from one set of document vectors."""

    settings: SweepSettings
    vector_field: str
    vectors_sha256: str  # of the document vectors every sweep index was built from
    documents: int
    queries: int
    exact: str
    points: tuple[AnnPoint, ...] = ()
