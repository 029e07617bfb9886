"""The load generator: clients on threads, a schedule, and one sample per request.

Timing follows Rally's definitions, on the monotonic clock (``time.perf_counter_ns``):

* **service time**: from the moment a request is handed to the client library to the moment
  its answer is parsed (what the engine and the wire cost, plus the client's own work);
* **latency**: from the request's *scheduled* start to its end. With a target throughput each
  client's requests are scheduled every ``clients / target`` seconds; a request that cannot
  start on time (the one before it is still running) waits, and that wait is part of its
  latency, so queueing is never hidden. Without a target, latency equals service time;
* **client CPU**: CPU time the sending thread used during the request (``thread_time``), the
  Python-side cost of building, sending and parsing the request. Waiting on the socket takes
  none, so it separates our overhead from the engine's time.

Samples that start during the warm-up are kept but marked; statistics use the others. A
request that fails (an HTTP error, a timeout, a refused connection) is a sample with its error
type; it never stops the load, and the load always ends: at its deadline (duration) or after
its count (iterations), each request bounded by the request timeout.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from base import EngineUnavailable, HarnessError, RequestFailed
from harness.load._ops import Operation
from harness.load._options import LoadOptions

#: every client starts its schedule this long after the threads are created, so none is late at once
START_LEAD_S = 0.05


@dataclass(frozen=True, slots=True)
class Sample:
    """One request. Times are seconds from the load's start (monotonic); durations in ms."""

    client: int
    query: int
    scheduled_s: float | None
    start_s: float
    end_s: float
    service_ms: float
    latency_ms: float
    took_ms: float | None
    client_cpu_ms: float
    warmup: bool
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(slots=True)
class LoadRun:
    """Every sample of one load phase, and when it ran."""

    operation: str
    options: LoadOptions
    queries: int
    started_at: float  # wall clock (epoch seconds) at the load's time zero
    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0
    query_ids: tuple[str, ...] = ()  # Sample.query -> the query's id

    @property
    def measured(self) -> list[Sample]:
        return [s for s in self.samples if not s.warmup]


def error_type(exc: BaseException) -> str:
    """A short, countable name for what went wrong (``timeout``, ``unavailable``, ``http 503``...)."""
    if isinstance(exc, EngineUnavailable):
        return "timeout" if "timed out" in str(exc).lower() else "unavailable"
    if isinstance(exc, RequestFailed):
        return f"http {exc.status}" if exc.status else "request failed"
    return type(exc).__name__


class _Client:
    """One client thread's loop: pick the next request, wait for its slot, send it, record it."""

    def __init__(self, index: int, op: Operation, options: LoadOptions, zero: int, stop: threading.Event):
        self.index, self.op, self.options, self.zero, self.stop = index, op, options, zero, stop
        self.samples: list[Sample] = []
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # a bug, not an engine error: reported by the caller
            self.failure = exc

    def _loop(self) -> None:
        opts, n = self.options, self.options.clients
        warmup_end = self.zero + int(opts.warmup_s * 1e9)
        deadline = warmup_end + int(opts.duration_s * 1e9) if opts.duration_s is not None else None
        total = opts.iterations * len(self.op) if opts.iterations is not None else None
        interval = opts.interval_s
        sent = measured = 0
        _sleep_until(self.zero, self.stop)  # every client starts together, at time zero
        while not self.stop.is_set():
            scheduled = self.zero + int((sent + self.index / n) * interval * 1e9) if interval else None
            if scheduled is not None:
                if deadline is not None and scheduled >= deadline:
                    return
                _sleep_until(scheduled, self.stop)
                if self.stop.is_set():
                    return
            now = time.perf_counter_ns()
            if deadline is not None and now >= deadline:
                return
            warm = (scheduled if scheduled is not None else now) < warmup_end
            if warm:
                query = (self.index + n * sent) % len(self.op)
            else:
                position = self.index + n * measured
                if total is not None and position >= total:
                    return
                query = position % len(self.op)
                measured += 1
            self.samples.append(self._send(query, scheduled, warm))
            sent += 1

    def _send(self, query: int, scheduled: int | None, warm: bool) -> Sample:
        took: float | None = None
        error: str | None = None
        cpu0 = time.thread_time_ns()
        t0 = time.perf_counter_ns()
        try:
            took = self.op.send(query, self.options.timeout_s)
        except HarnessError as exc:
            error = error_type(exc)
        t1 = time.perf_counter_ns()
        cpu1 = time.thread_time_ns()
        return Sample(
            client=self.index,
            query=query,
            scheduled_s=(scheduled - self.zero) / 1e9 if scheduled is not None else None,
            start_s=(t0 - self.zero) / 1e9,
            end_s=(t1 - self.zero) / 1e9,
            service_ms=(t1 - t0) / 1e6,
            # from the scheduled start (never after t0: the client sleeps until it), else the actual one
            latency_ms=(t1 - (scheduled if scheduled is not None else t0)) / 1e6,
            took_ms=took,
            client_cpu_ms=(cpu1 - cpu0) / 1e6,
            warmup=warm,
            error=error,
        )


def _sleep_until(when_ns: int, stop: threading.Event) -> None:
    while True:
        left = when_ns - time.perf_counter_ns()
        if left <= 0 or stop.is_set():
            return
        time.sleep(min(left / 1e9, 0.05))  # bounded naps: a stop request is seen within 50 ms


def run_load(op: Operation, options: LoadOptions) -> LoadRun:
    """Drive ``op`` with ``options.clients`` clients until the bound; every request is one sample.

    Ctrl-C stops every client at its next request (the one in flight finishes or times out).
    """
    if len(op) == 0:
        raise HarnessError(f"the {op.name} operation has no requests to send")
    stop = threading.Event()
    zero = time.perf_counter_ns() + int(START_LEAD_S * 1e9)
    started_at = time.time() + START_LEAD_S
    clients = [_Client(i, op, options, zero, stop) for i in range(options.clients)]
    threads = [threading.Thread(target=c.run, name=f"load-client-{c.index}", daemon=True) for c in clients]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(timeout=0.2)  # short joins: Ctrl-C reaches the main thread at once
    except KeyboardInterrupt:
        stop.set()
        for t in threads:
            t.join(timeout=options.timeout_s + 1)
        raise
    failed = next((c.failure for c in clients if c.failure is not None), None)
    if failed is not None:
        raise failed
    samples = sorted((s for c in clients for s in c.samples), key=lambda s: (s.start_s, s.client))
    wall = max((s.end_s for s in samples), default=0.0)
    qids = tuple(op.query_id(i) for i in range(len(op)))
    return LoadRun(op.name, options, len(op), started_at, samples, wall, qids)
