"""A node frozen in the middle of a load phase (SIGSTOP on its JVMs, the way ``docker pause``
freezes a container): the requests in flight time out, the errors are counted by type, the load
ends at its deadline (no hang), and the summary says how many failed and why."""

from __future__ import annotations

import json
import signal
import threading
import time

import psutil
import pytest

from harness.inspect import load_table
from harness.load import LoadOptions, LoadRun, SearchOperation, run_load, summarize
from harness.results import ArmResult, DatasetResult, Percentiles
from indexer import ConnectionSettings, ManagedNode, connect
from tests._nodes import ManagedNodes
from tests.reliability._faults import fault_node

INDEX = "pytest-load-pause"


@pytest.fixture(scope="module")
def node(managed_nodes: ManagedNodes) -> ManagedNode:
    return fault_node(managed_nodes)


def _freeze(pid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to the node's launcher and its server JVM (children first when thawing last)."""
    proc = psutil.Process(pid)
    for p in [proc, *proc.children(recursive=True)]:
        p.send_signal(sig)


def test_a_node_paused_mid_load_counts_errors_and_ends_on_time(node: ManagedNode) -> None:
    status = node.status()
    assert status.pid is not None
    backend = connect(ConnectionSettings(url=status.url))
    backend.delete_index(INDEX, missing_ok=True)
    backend.create_index(
        INDEX, settings={"index": {"number_of_replicas": 0}}, mappings={"properties": {"t": {"type": "text"}}}
    )
    lines = [
        json.dumps(x)
        for i in range(50)
        for x in ({"index": {"_index": INDEX, "_id": str(i)}}, {"t": f"word{i % 7} common"})
    ]
    backend.bulk(("\n".join(lines) + "\n").encode())
    backend.refresh(INDEX)
    bodies = tuple({"query": {"match": {"t": f"word{i % 7}"}}, "size": 5} for i in range(20))
    op = SearchOperation(backend, INDEX, tuple(f"q{i}" for i in range(20)), bodies)
    opts = LoadOptions(clients=2, duration_s=3.0, warmup_s=0, timeout_s=1.0)
    done: dict[str, LoadRun] = {}
    worker = threading.Thread(target=lambda: done.setdefault("run", run_load(op, opts)), daemon=True)
    began = time.monotonic()
    worker.start()
    try:
        time.sleep(1.0)  # a second of normal answers first
        _freeze(status.pid, signal.SIGSTOP)
        worker.join(timeout=opts.duration_s + opts.timeout_s + 10)
        assert not worker.is_alive(), "the load phase hung on a frozen node"
    finally:
        _freeze(status.pid, signal.SIGCONT)
    elapsed = time.monotonic() - began
    assert elapsed < opts.duration_s + opts.timeout_s + 2  # ended at its deadline (+ the last timeout)
    run = done["run"]
    result = summarize(run)
    assert result.requests == len(run.measured)
    assert 0 < result.errors < result.requests  # answers before the pause, timeouts during it
    assert result.error_types.get("timeout", 0) >= 1 and sum(result.error_types.values()) == result.errors
    assert result.error_rate == pytest.approx(result.errors / result.requests, abs=1e-6)
    assert result.service_time_ms.max < opts.timeout_s * 1000  # only answered requests in the distribution
    arm = ArmResult({}, {}, Percentiles(), Percentiles(), None, 20, load=result)
    table = load_table("paused", DatasetResult(arms={"lexical": arm}))
    assert table is not None
    errors_cell = table.rows[0][5].plain()
    assert f"{result.errors} (" in errors_cell and "timeout" in errors_cell
    backend.delete_index(INDEX, missing_ok=True)  # the node answers again after SIGCONT
    backend.close()
