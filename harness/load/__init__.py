"""The load phase: an arm's queries replayed as single requests, measured the way Rally measures.

    op = SearchOperation(backend, index, qids, bodies)     # the arm's own bodies
    run = run_load(op, LoadOptions(clients=2, duration_s=10, target_throughput=50))
    result = summarize(run)                                # typed LoadResult (results.json)

* :mod:`._options`: :class:`LoadOptions` (clients, duration or iterations, target throughput,
  warm-up, request timeout), validated once;
* :mod:`._ops`: what one request is (:class:`SearchOperation`, :class:`MultiSearchOperation`),
  over the :class:`~indexer.Backend`, so either engine;
* :mod:`._engine`: the clients, the schedule and the samples (monotonic clock);
* :mod:`._stats`: samples to :class:`~harness.results.LoadResult`.
"""

from harness.load._engine import LoadRun, Sample, error_type, run_load
from harness.load._ops import MultiSearchOperation, Operation, SearchOperation
from harness.load._options import DEFAULT_DURATION_S, DEFAULT_WARMUP_S, MAX_CLIENTS, LoadOptions
from harness.load._stats import summarize

__all__ = [
    "DEFAULT_DURATION_S",
    "DEFAULT_WARMUP_S",
    "MAX_CLIENTS",
    "LoadOptions",
    "LoadRun",
    "MultiSearchOperation",
    "Operation",
    "Sample",
    "SearchOperation",
    "error_type",
    "run_load",
    "summarize",
]
