"""The load engine against real engines (Elasticsearch and OpenSearch through the Backend): bounds,
counts, Rally's latency from the scheduled start, and errors counted instead of raised."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator

import pytest

from base import ConfigError
from harness.experiment import experiment
from harness.load import LoadOptions, MultiSearchOperation, SearchOperation, run_load, summarize
from indexer import Backend

WORDS = ["cell", "protein", "gene", "cancer", "virus", "brain", "heart", "blood", "drug", "immune"]


@pytest.fixture(scope="module")
def load_index(backend: Backend) -> Iterator[str]:
    name = "pytest-load-engine"
    backend.delete_index(name, missing_ok=True)
    backend.create_index(
        name,
        settings={"index": {"number_of_shards": 1, "number_of_replicas": 0}},
        mappings={"properties": {"text": {"type": "text"}}},
    )
    lines = []
    for i in range(200):
        text = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(i % 5 + 3))
        lines += [json.dumps({"index": {"_index": name, "_id": str(i)}}), json.dumps({"text": text})]
    assert not backend.bulk(("\n".join(lines) + "\n").encode()).failed
    backend.refresh(name)
    yield name
    backend.delete_index(name, missing_ok=True)


def _op(backend: Backend, index: str, n: int = 20) -> SearchOperation:
    qids = tuple(f"q{i}" for i in range(n))
    bodies = tuple(
        {"size": 10, "_source": False, "query": {"match": {"text": WORDS[i % len(WORDS)]}}} for i in range(n)
    )
    return SearchOperation(backend, index, qids, bodies)


def test_iterations_send_exactly_iterations_times_queries(backend: Backend, load_index: str) -> None:
    op = _op(backend, load_index)
    run = run_load(op, LoadOptions(clients=3, iterations=2, warmup_s=0.2))
    measured = run.measured
    assert len(measured) == 2 * len(op)
    assert Counter(s.query for s in measured) == {
        i: 2 for i in range(len(op))
    }  # every query twice, none more
    result = summarize(run)
    assert result.requests == len(measured) and result.errors == 0
    assert result.warmup_requests == len(run.samples) - len(measured) > 0
    assert result.service_time_ms.p50 > 0 and result.took_ms.max >= 0
    assert result.latency_ms == result.service_time_ms  # no target throughput: latency is service time


def test_duration_bounds_the_load_and_the_count_is_what_it_reports(backend: Backend, load_index: str) -> None:
    opts = LoadOptions(clients=2, duration_s=1.0, warmup_s=0.3, timeout_s=5)
    run = run_load(_op(backend, load_index), opts)
    deadline = opts.warmup_s + opts.duration_s
    assert all(s.start_s < deadline for s in run.samples)  # nothing starts after the deadline
    assert run.wall_s < deadline + opts.timeout_s  # what was in flight finished (or timed out)
    assert min(s.start_s for s in run.samples) >= 0  # every client waited for time zero
    assert all(s.warmup == (s.start_s < opts.warmup_s) for s in run.samples)
    result = summarize(run)
    assert result.requests == len(run.measured) == sum(1 for s in run.samples if not s.warmup)
    assert result.requests + result.warmup_requests == len(run.samples)


def test_under_a_target_throughput_latency_is_taken_from_the_scheduled_start(
    backend: Backend, load_index: str
) -> None:
    opts = LoadOptions(clients=2, duration_s=1.5, warmup_s=0.0, target_throughput=40)
    run = run_load(_op(backend, load_index), opts)
    assert run.samples
    for s in run.samples:
        assert s.scheduled_s is not None and s.start_s >= s.scheduled_s
        assert s.latency_ms >= s.service_ms
    # the schedule: each client every clients/target seconds, clients offset by 1/target
    for client in (0, 1):
        starts = sorted(
            s.scheduled_s for s in run.samples if s.client == client and s.scheduled_s is not None
        )
        gaps = {round(b - a, 6) for a, b in itertools.pairwise(starts)}
        assert gaps == {round(opts.clients / 40, 6)}
    assert summarize(run).throughput <= 40 * 1.05  # a schedule is never beaten


def test_a_schedule_the_engine_cannot_keep_shows_as_latency_not_hidden(
    backend: Backend, load_index: str
) -> None:
    """Rally #64: with a target far above what one client can send, requests queue behind the schedule."""
    run = run_load(
        _op(backend, load_index), LoadOptions(clients=1, iterations=1, warmup_s=0, target_throughput=20_000)
    )
    result = summarize(run)
    assert result.latency_ms.max > 2 * result.service_time_ms.max
    assert result.throughput < 20_000


def test_fused_inputs_travel_as_one_msearch_per_query(backend: Backend, load_index: str) -> None:
    single = _op(backend, load_index, 10)
    op = MultiSearchOperation(
        backend, load_index, single.qids, tuple((b, b) for b in single.bodies), "msearch(a+b)"
    )
    run = run_load(op, LoadOptions(clients=1, iterations=1, warmup_s=0))
    assert len(run.measured) == 10 and all(s.ok and s.took_ms is not None for s in run.measured)
    assert summarize(run, "two searches").operation == "msearch(a+b)"


def test_engine_errors_are_counted_not_raised(backend: Backend, load_index: str) -> None:
    bad = SearchOperation(backend, "pytest-load-no-such-index", ("q",), ({"query": {"match_all": {}}},))
    run = run_load(bad, LoadOptions(clients=1, iterations=3, warmup_s=0))
    result = summarize(run)
    assert result.requests == 3 and result.errors == 3 and result.error_rate == 1.0
    assert result.error_types == {"http 404": 3}
    assert result.throughput == 0 and result.service_time_ms.p50 == 0


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"load.duration": 1, "load.iterations": 1}, "expected load.duration or load.iterations, found both"),
        ({"load.clients": 0}, r"load.clients=0: expected 1\.\.\d+, found 0"),
        ({"load.target_throughput": 0}, "load.target_throughput=0: expected more than 0"),
        ({"load.warmup": -1}, r"load.warmup=-1: expected 0\.\.600, found -1"),
    ],
)
def test_bad_options_are_refused_clearly(keys: dict[str, float], message: str) -> None:
    """The load phase's options are keys (load.*): checked by their declarations, before any work."""
    with pytest.raises(ConfigError, match=message):
        experiment(values={"mode": "lexical", "load.enabled": True, **keys})
