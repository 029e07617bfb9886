"""A load phase's samples summarised as Rally summarises them (typed: :class:`~harness.results.LoadResult`)."""

from __future__ import annotations

from collections import Counter

from harness.load._engine import LoadRun
from harness.results import Distribution, LoadResult


def summarize(run: LoadRun, note: str = "") -> LoadResult:
    """Percentiles over the successful measured requests; throughput over the measured window.

    The window runs from the first measured request's (scheduled) start to the last one's end,
    so a schedule that could not be kept shows as lower throughput and higher latency.
    """
    measured = run.measured
    ok = [s for s in measured if s.ok]
    starts = [s.scheduled_s if s.scheduled_s is not None else s.start_s for s in measured]
    window = max(s.end_s for s in measured) - min(starts) if measured else 0.0
    errors = Counter(s.error for s in measured if s.error is not None)
    return LoadResult(
        operation=run.operation,
        clients=run.options.clients,
        target_throughput=run.options.target_throughput,
        requests=len(measured),
        errors=sum(errors.values()),
        error_rate=round(sum(errors.values()) / len(measured), 6) if measured else 0.0,
        throughput=round(len(ok) / window, 3) if window > 0 else 0.0,
        duration_s=round(window, 3),
        service_time_ms=Distribution.of([s.service_ms for s in ok]),
        latency_ms=Distribution.of([s.latency_ms for s in ok]),
        took_ms=Distribution.of([s.took_ms for s in ok if s.took_ms is not None]),
        client_cpu_ms=Distribution.of([s.client_cpu_ms for s in ok]),
        warmup_requests=len(run.samples) - len(measured),
        error_types=dict(sorted((str(k), v) for k, v in errors.items())),
        note=note,
    )
