"""Faults during ``harness run``: the node dies while the second dataset's searches are in flight.

The harness retries each msearch with exponential backoff, then stops with a clear error and a
non-zero exit; the first dataset's finished arm stays checkpointed. After a restart the same
command resumes: the checkpoint is reused untouched (same bytes, same mtime) and the node sees no
search of the first dataset's queries again (its per-index search counter proves it).
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from harness.cli import main as harness_main
from indexer import ManagedNode
from tests._nodes import ManagedNodes
from tests._support import scifact_subset
from tests.reliability._faults import (
    client_for,
    ensure_running,
    fault_node,
    poll,
    search_total,
    start_harness,
    summaries,
    while_stopped,
)

RETRIES = 3
#: the least total backoff before giving up: attempts 1..RETRIES sleep 0.5 s x 2^(attempt-1) x [0.5, 1)
MIN_BACKOFF_S = sum(0.5 * 2 ** (a - 1) * 0.5 for a in range(1, RETRIES + 1))
N_A, N_B = 40, 300  # test queries of the two datasets


@pytest.fixture(scope="module")
def node(managed_nodes: ManagedNodes) -> ManagedNode:
    return fault_node(managed_nodes)


def test_node_down_mid_run_fails_clearly_and_the_rerun_resumes(
    node: ManagedNode, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    url = node.config.url
    client = client_for(url)
    qa = scifact_subset(tmp_path / "qfault-a", n_docs=300, n_test=N_A, n_train=5)
    qb = scifact_subset(tmp_path / "qfault-b", n_docs=400, n_test=N_B, n_train=5)
    code = harness_main(
        ["index", "--dataset", str(qa), "--dataset", str(qb), "--no-vectors", "--url", url, "--no-progress"]
    )
    out = capfd.readouterr()
    assert code == 0, out.err
    index_a, index_b = (s.index for s in summaries(out.out))

    run_dir = tmp_path / "run"
    argv = [
        "run", "lexical", "--dataset", str(qa), "--dataset", str(qb), "--output", str(run_dir),
        "--records", "jsonl", "--no-progress", "--url", url,
        "--batch-size", "1", "--concurrency", "1", "--max-retries", str(RETRIES), "--timeout", "5",
    ]  # fmt: skip
    ckpt_a = run_dir / "arms" / "qfault-a" / "test" / "lexical.json"
    ckpt_b = run_dir / "arms" / "qfault-b" / "test" / "lexical.json"
    base_b = search_total(client, index_b)
    harness = start_harness(argv, tmp_path / "logs")
    try:

        def b_searching() -> bool:
            assert harness.proc.poll() is None, f"the run ended before the fault:\n{harness.stderr}"
            # dataset a is done (checkpointed) and b's searches are under way (beyond build_index's scans)
            return ckpt_a.is_file() and search_total(client, index_b) > base_b + 20

        poll("dataset b's searches to start", b_searching, timeout_s=120)
        node.kill()
        killed_at = time.monotonic()
        failed_with = harness.wait(timeout_s=90)
        exit_s = time.monotonic() - killed_at
    finally:
        harness.stop()
        restart_s = ensure_running(node)
    err = harness.stderr
    assert failed_with == 1, err
    assert f"error: the engine stopped answering searches on {index_b} after {RETRIES} retries" in err
    assert "Traceback" not in err
    assert exit_s >= MIN_BACKOFF_S, f"gave up after {exit_s:.2f}s: the retries did not back off"
    # the finished arm is kept; the interrupted one was never written; the run is not marked complete
    assert ckpt_a.is_file() and not ckpt_b.exists()
    assert not (run_dir / "results.json").exists()
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "running"
    kept = ckpt_a.stat().st_mtime_ns, ckpt_a.read_bytes()
    assert len(json.loads(kept[1])["run"]) == N_A

    # after the restart: the same command resumes from the checkpoint
    before = {i: search_total(client, i) for i in (index_a, index_b)}
    code = harness_main(argv)
    out = capfd.readouterr()
    assert code == 0, out.err
    after = {i: search_total(client, i) for i in (index_a, index_b)}
    assert (ckpt_a.stat().st_mtime_ns, ckpt_a.read_bytes()) == kept, "the finished arm was redone"
    assert ckpt_b.is_file()
    searched_a, searched_b = (after[i] - before[i] for i in (index_a, index_b))
    assert searched_a < N_A, f"dataset a's {N_A} queries were sent again ({searched_a} searches)"
    assert searched_b >= N_B
    results = json.loads((run_dir / "results.json").read_text())
    assert results["manifest"]["status"] == "complete"
    queries = {name: d["arms"]["lexical"]["queries"] for name, d in results["datasets"].items()}
    assert queries == {"qfault-a": N_A, "qfault-b": N_B}
    print(
        f"\nfault: node SIGKILLed during dataset b's searches; harness exit {failed_with} after {exit_s:.1f}s "
        f"({RETRIES} msearch retries with backoff >= {MIN_BACKOFF_S:.2f}s, then 'the engine stopped answering "
        f"searches ... after {RETRIES} retries'); dataset a's arm kept; node restarted in {restart_s:.0f}s; "
        f"rerun exit 0: checkpoint a untouched, {searched_a} searches on a (index checks only, {N_A} queries "
        f"not re-sent), {searched_b} on b"
    )
    for name in (index_a, index_b):
        client.indices.delete(index=name)


def test_ctrl_c_mid_search_stops_at_once_and_sends_nothing_more(
    node: ManagedNode, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """SIGINT while searches are in flight: exit 130 with the resume hint, and the searches not yet sent
    are cancelled (the pool used to run every queued batch to the end before Ctrl-C took effect). The
    harness is started the way a shell starts a background job (SIGINT ignored): the signal still counts."""
    url = node.config.url
    client = client_for(url)
    data = scifact_subset(tmp_path / "sigint-search", n_docs=300, n_test=300, n_train=5)
    code = harness_main(["index", "--dataset", str(data), "--no-vectors", "--url", url, "--no-progress"])
    out = capfd.readouterr()
    assert code == 0, out.err
    (summary,) = summaries(out.out)
    base = search_total(client, summary.index)
    run_dir = tmp_path / "run-sigint"
    argv = [
        "run", "lexical", "--dataset", str(data), "--output", str(run_dir), "--records", "jsonl",
        "--no-progress", "--url", url, "--batch-size", "1", "--concurrency", "1",
    ]  # fmt: skip
    harness = start_harness(argv, tmp_path / "logs-sigint", background=True)
    try:
        poll("20 searches", lambda: search_total(client, summary.index) - base >= 20, timeout_s=120)
        sent = while_stopped(
            harness,
            lambda: search_total(client, summary.index) - base,
            lambda: harness.proc.send_signal(signal.SIGINT),
        )
        code = harness.wait(timeout_s=60)
    finally:
        harness.stop()
    total = search_total(client, summary.index) - base
    assert code == 130, harness.stderr
    assert "interrupted" in harness.stderr and "Traceback" not in harness.stderr
    assert total <= sent + 2 < N_B, f"{total} searches after the interrupt at {sent} (of {N_B} queries)"
    assert not (run_dir / "results.json").exists()
    print(f"\nfault: SIGINT after {sent} of {N_B} searches; exit {code}; {total - sent} more searches ran")
