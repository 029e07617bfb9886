"""Faults during ``harness index``: the node killed mid-load, the harness interrupted (SIGINT) or
killed (SIGKILL) mid-load. Each time the alias keeps pointing at the complete previous index, and
running the same command again resumes (documents already there are not sent again) to an exact,
duplicate-free, verified and published index.

The load is 3,000 SciFact documents, BM25 side only (vectors would prove nothing more here), in
0.1 MiB bulk requests from one sender, so it runs for several seconds and can be cut mid-way.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from harness.cli import main as harness_main
from indexer import ConnectionSettings, ManagedNode, choose_analysis, connect
from indexer._layout import index_name
from indexer.data import load_dataset
from tests._nodes import ManagedNodes
from tests._support import scifact_subset
from tests.reliability._faults import (
    Harness,
    alias_target,
    all_ids,
    client_for,
    corpus_ids,
    ensure_running,
    fault_node,
    live_count,
    one_summary,
    poll,
    start_harness,
    while_stopped,
    writes_settled,
)

N_PREVIOUS = 200  # the complete, published index the alias points at before the interrupted load
N_DOCS = 3000
CUT_AT = 500  # interrupt once this many documents are searchable (of N_DOCS)
RETRIES = 2


@pytest.fixture(scope="module")
def node(managed_nodes: ManagedNodes) -> ManagedNode:
    return fault_node(managed_nodes)


@dataclass
class Setup:
    folder: Path
    alias: str
    previous: str  # the published index of the previous corpus
    index: str  # the index the new corpus goes to
    expected: list[str]


def _argv(folder: Path, url: str) -> list[str]:
    return [
        "index", "--dataset", str(folder), "--no-vectors", "--url", url, "--quiet",
        "--workers", "1", "--chunk-mb", "0.1", "--max-retries", str(RETRIES),
    ]  # fmt: skip


def _prepare(client: Elasticsearch, url: str, folder: Path, capfd: pytest.CaptureFixture[str]) -> Setup:
    """Publish a complete index of a smaller corpus, then grow the corpus: the next load is a new index."""
    scifact_subset(folder, n_docs=N_PREVIOUS, n_test=5, n_train=5)
    assert harness_main(_argv(folder, url)) == 0, capfd.readouterr().err
    first = one_summary(capfd.readouterr().out)
    assert first.work == "built" and first.indexed == N_PREVIOUS
    scifact_subset(folder, n_docs=N_DOCS, n_test=5, n_train=5)
    ds = load_dataset(str(folder))
    backend = connect(ConnectionSettings(url=url))
    try:
        analysis = choose_analysis(backend.probe())
    finally:
        backend.close()
    index = index_name(ds.name, ds.fingerprint.corpus, analysis)
    assert index != first.index and alias_target(client, first.alias) == first.index
    return Setup(folder, first.alias, first.index, index, corpus_ids(folder))


def _cut_midway(
    client: Elasticsearch, setup: Setup, harness: Harness, act: Callable[[], None]
) -> tuple[int, set[str | None]]:
    """Once CUT_AT documents are in, freeze the harness, count what landed, ``act`` (signal it, kill the
    node), and let it go on. Returns (count, alias targets seen all along). Frozen, the load cannot
    finish between the count and the act, however the machine schedules the processes."""
    seen: set[str | None] = set()

    def enough() -> int:
        assert harness.proc.poll() is None, f"harness ended before it could be cut:\n{harness.stderr}"
        seen.add(alias_target(client, setup.alias))
        n = live_count(client, setup.index)
        return n if n >= CUT_AT else 0

    def settled_count() -> int:
        writes_settled(client)  # the bulk request in flight when it froze still lands
        return live_count(client, setup.index)

    poll(f"{CUT_AT} documents in {setup.index}", enough, timeout_s=90, interval_s=0.05)
    count: int = while_stopped(harness, settled_count, act)
    assert count < N_DOCS, "the load finished before it could be cut: make it longer"
    return count, seen


def _assert_unpublished(client: Elasticsearch, setup: Setup) -> int:
    """After the fault: alias on the complete previous index, the new one partial and not aliased."""
    writes_settled(client)
    assert alias_target(client, setup.alias) == setup.previous
    assert int(client.count(index=setup.alias)["count"]) == N_PREVIOUS
    meta = client.indices.get_mapping(index=setup.previous)[setup.previous]["mappings"]["_meta"]
    assert meta["status"] == "published"
    partial = live_count(client, setup.index)
    assert 0 < partial < N_DOCS
    status = client.indices.get_mapping(index=setup.index)[setup.index]["mappings"]["_meta"]["status"]
    assert status == "building"
    return partial


def _resume(
    client: Elasticsearch, url: str, setup: Setup, partial: int, capfd: pytest.CaptureFixture[str]
) -> tuple[int, int]:
    """The same command again: resumes, then publishes an exact, duplicate-free index."""
    code = harness_main(_argv(setup.folder, url))
    out = capfd.readouterr()
    assert code == 0, out.err
    s = one_summary(out.out)
    assert s.work == "resumed/extended" and s.index == setup.index
    assert s.skipped == partial, "every document already there is skipped, and only those"
    assert s.indexed == N_DOCS - partial, "only the missing documents are sent"
    assert alias_target(client, setup.alias) == setup.index
    meta = client.indices.get_mapping(index=setup.index)[setup.index]["mappings"]["_meta"]
    assert meta["status"] == "published"
    assert int(client.count(index=setup.alias)["count"]) == N_DOCS
    ids = all_ids(client, setup.index)
    assert len(ids) == len(set(ids)) == N_DOCS and set(ids) == set(setup.expected)
    return s.indexed, len(set(ids))


def _drop(client: Elasticsearch, setup: Setup) -> None:
    for name in (setup.previous, setup.index):
        client.indices.delete(index=name, ignore_unavailable=True)


def test_node_killed_mid_index_then_the_rerun_resumes(
    node: ManagedNode, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    url = node.config.url
    client = client_for(url)
    setup = _prepare(client, url, tmp_path / "fault-node-kill", capfd)
    harness = start_harness(_argv(setup.folder, url), tmp_path / "logs")
    try:
        before_kill, seen = _cut_midway(client, setup, harness, node.kill)
        killed_at = time.monotonic()
        code = harness.wait(timeout_s=90)
        exit_s = time.monotonic() - killed_at
    finally:
        harness.stop()
        restart_s = ensure_running(node)
    assert seen == {setup.previous}, f"the alias pointed elsewhere during the load: {seen}"
    err = harness.stderr
    assert code == 1, err
    assert f"error: bulk loading into {setup.index} failed" in err
    assert f"could not be delivered after {RETRIES} retries" in err
    assert "Traceback" not in err
    partial = _assert_unpublished(client, setup)
    # ``partial`` may be a little below ``before_kill``: a refresh exposes the documents of the bulk request
    # in flight before its translog fsync acknowledges them, and SIGKILL loses those; the rerun re-sends them
    sent, distinct = _resume(client, url, setup, partial, capfd)
    print(
        f"\nfault: node SIGKILLed at >= {before_kill} of {N_DOCS} docs; harness exit {code} after "
        f"{exit_s:.1f}s ({RETRIES} retries with backoff, then a clear error); node restarted in "
        f"{restart_s:.0f}s; alias stayed on the previous complete index ({N_PREVIOUS} docs); {partial} docs "
        f"survived ({before_kill} were searchable before the kill); the rerun skipped {partial} and sent {sent}; found {distinct} distinct of {N_DOCS} expected"
    )
    _drop(client, setup)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_harness_interrupted_mid_index_then_the_rerun_resumes(
    node: ManagedNode, tmp_path: Path, capfd: pytest.CaptureFixture[str], sig: signal.Signals
) -> None:
    url = node.config.url
    client = client_for(url)
    setup = _prepare(client, url, tmp_path / f"fault-{sig.name.lower()}", capfd)
    # started as a shell starts a background job (SIGINT ignored): Ctrl-C / kill -INT must still stop it
    harness = start_harness(_argv(setup.folder, url), tmp_path / "logs", background=True)
    try:
        before, seen = _cut_midway(client, setup, harness, lambda: harness.proc.send_signal(sig))
        signalled_at = time.monotonic()
        code = harness.wait(timeout_s=60)
        exit_s = time.monotonic() - signalled_at
    finally:
        harness.stop()
    assert seen == {setup.previous}, f"the alias pointed elsewhere during the load: {seen}"
    if sig == signal.SIGINT:
        assert code == 130, harness.stderr
        assert "Traceback" not in harness.stderr
        assert "interrupted" in harness.stderr and "run the same command again to resume" in harness.stderr
    else:
        assert code == -signal.SIGKILL
    partial = _assert_unpublished(client, setup)
    sent, distinct = _resume(client, url, setup, partial, capfd)
    print(
        f"\nfault: harness {sig.name} at >= {before} of {N_DOCS} docs; exit {code} after {exit_s:.1f}s; "
        f"alias stayed on the previous complete index; {partial} docs in the partial index; the rerun "
        f"skipped {partial} and sent {sent}; found {distinct} distinct of {N_DOCS} expected"
    )
    _drop(client, setup)
