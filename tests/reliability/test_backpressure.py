"""Backpressure: a node whose write pool is one thread with a queue of one rejects concurrent bulk
requests with 429; ``harness index`` with several senders retries them with backoff, loses no
document, and says how many retries it made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from harness.cli import main as harness_main
from indexer import ManagedNode
from tests._nodes import ManagedNodes
from tests._support import scifact_subset
from tests.reliability._faults import (
    TINY_WRITE_POOL,
    alias_target,
    all_ids,
    client_for,
    corpus_ids,
    fault_node,
    one_summary,
)

N_DOCS = 1500
WORKERS = 4


@pytest.fixture(scope="module")
def node(managed_nodes: ManagedNodes) -> ManagedNode:
    return fault_node(managed_nodes)


def _write_pool(client: Elasticsearch) -> dict[str, Any]:
    nodes = client.nodes.stats(metric="thread_pool")["nodes"]
    (stats,) = nodes.values()
    pool: dict[str, Any] = stats["thread_pool"]["write"]
    return pool


def test_bulk_rejections_are_retried_and_nothing_is_lost(
    node: ManagedNode, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    client = client_for(node.config.url)
    info = client.nodes.info(metric="thread_pool")["nodes"]
    (settings,) = info.values()
    write = settings["thread_pool"]["write"]
    # the node really runs the tiny pool (9.5.4 accepted both settings)
    assert (write["type"], write["size"], write["queue_size"]) == (
        "fixed",
        TINY_WRITE_POOL["thread_pool.write.size"],
        TINY_WRITE_POOL["thread_pool.write.queue_size"],
    ), write
    rejected_before = int(_write_pool(client)["rejected"])

    folder = scifact_subset(tmp_path / "bp-scifact", n_docs=N_DOCS, n_test=10, n_train=5)
    expected = corpus_ids(folder)
    argv = ["index", "--dataset", str(folder), "--no-vectors", "--url", node.config.url, "--no-progress"]
    argv += ["--workers", str(WORKERS), "--chunk-mb", "0.1"]
    code = harness_main(argv)
    out = capfd.readouterr()
    assert code == 0, out.err
    summary = one_summary(out.out)
    rejected = int(_write_pool(client)["rejected"]) - rejected_before

    assert summary.retries > 0, f"no bulk request was retried: the node never pushed back ({out.out})"
    assert rejected > 0, "the node's write pool rejected nothing"
    assert summary.indexed == len(expected) and summary.work == "built"
    assert alias_target(client, summary.alias) == summary.index
    assert int(client.count(index=summary.alias)["count"]) == len(expected)
    ids = all_ids(client, summary.index)
    assert len(ids) == len(set(ids)) == len(expected) and set(ids) == set(expected)
    print(
        f"\nbackpressure: write pool {write['size']} thread / queue {write['queue_size']}, {WORKERS} senders, "
        f"0.1 MiB requests: node rejected {rejected} write tasks (429); harness made {summary.retries} bulk "
        f"retries; {len(expected)} documents expected, {len(ids)} found, {len(set(ids))} distinct"
    )
    client.indices.delete(index=summary.index)
