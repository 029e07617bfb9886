"""Faults that containers make easy: a hung node (``docker pause``) and network loss inside a 2-node cluster.

Pause. One secured node from ``harness engine start --docker``'s DockerNode. ``harness run lexical``
sends one search per msearch (``--batch-size 1 --concurrency 1``, ``--timeout 3``); once searches are
under way the container is paused: the kernel still accepts the connection, nothing answers.
  * a pause longer than the retry budget (``--max-retries 2``): each attempt times out after 3 s, the
    harness retries with backoff, then exits 1 with "the engine stopped answering searches ... after 2
    retries"; after ``docker unpause`` the same command resumes and its rankings equal an undisturbed
    run's;
  * a pause shorter than the budget (``--max-retries 6``, unpaused 5 s later): the run finishes with
    exit 0, its retries counted in results.json, its rankings equal to the undisturbed run's.

Network loss. Two nodes in two containers, both master-eligible, one index built by ``harness index``
with 2 shards and the harness's default of 1 replica on two nodes (each node holds a full copy). The
packets between the nodes' transport ports are then dropped (iptables DROP: connections hang as on a
real network loss, rather than being refused) while ``harness run lexical`` runs through each node.
Expected: through the elected master, rankings equal to those before the loss; through the node cut
off from it, the same rankings or a clear error (exit 1, no traceback). Then the loss ends and the
cluster heals.

Why the two containers share one network namespace: Elasticsearch enforces its bootstrap checks as
soon as transport binds beyond loopback, and one of them needs 65,535 file descriptors, while this
machine caps every process (dockerd and its containers included) at 20,000. So the second container
joins the first one's network namespace (``network_mode=container:``), the nodes talk over
127.0.0.1:9300/9301, and the loss is made there with ``nsenter -n iptables``. HTTP ports are published
on 127.0.0.1 only; the test reaches the nodes through them and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from base import default_state_dir
from harness.cli import main as harness_main
from indexer import ConnectionSettings, DockerEngineConfig, DockerNode
from tests._docker import removed_afterwards, unavailable, wait_for
from tests._support import REPO, raw_es_client, scifact_subset
from tests.reliability._faults import poll, search_total, start_harness, summaries
from tests.reliability._nodes import free_port

N_QUERIES = 300
TIMEOUT_S = 3


def _trec(run_dir: Path, dataset: str, arm: str = "lexical") -> dict[str, list[tuple[str, str]]]:
    """qid -> [(docid, score)] in rank order, from the run's TREC file."""
    ranking: dict[str, list[tuple[str, str]]] = {}
    for line in (run_dir / "runs" / dataset / f"{arm}.trec").read_text().splitlines():
        qid, _q0, docid, _rank, score, _tag = line.split()
        ranking.setdefault(qid, []).append((docid, score))
    return ranking


def _results(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "results.json").read_text())
    return data


# --------------------------------------------------------------------------- pause


@dataclass
class PausedNode:
    node: DockerNode
    settings: ConnectionSettings
    dataset: Path
    index: str
    baseline: dict[str, list[tuple[str, str]]]

    def argv(self, run_dir: Path, retries: int) -> list[str]:
        return [
            "run", "lexical", "--dataset", str(self.dataset), "--output", str(run_dir), "--records", "jsonl",
            "--no-progress", "--url", self.settings.url, "--batch-size", "1", "--concurrency", "1",
            "--timeout", str(TIMEOUT_S), "--max-retries", str(retries),
        ]  # fmt: skip

    def env(self) -> dict[str, str]:
        password = self.settings.password.reveal() if self.settings.password else ""
        return {"ES_USERNAME": "elastic", "ES_PASSWORD": password}

    def client(self) -> Elasticsearch:
        return raw_es_client(self.settings, request_timeout=10, max_retries=0, retry_on_timeout=False)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def paused(
    docker_client: Any, es_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PausedNode]:
    name = f"pytest-pause-{os.getpid()}"
    cfg = DockerEngineConfig(default_state_dir(), name, free_port(), es_image, heap="512m")
    node = DockerNode(cfg, docker_client)
    try:
        node.start()
        settings = node.connection()
        password = settings.password.reveal() if settings.password else ""
        work = tmp_path_factory.mktemp("pause")
        dataset = scifact_subset(work / "qpause", n_docs=400, n_test=N_QUERIES, n_train=5)
        auth = ["--url", settings.url, "--username", "elastic", "--password", password]
        out = subprocess.run(
            [sys.executable, "-m", "harness", "index", "--dataset", str(dataset), "--no-vectors", "--no-progress", *auth],
            capture_output=True, text=True, timeout=600, check=False, cwd=REPO, env={**os.environ, "COLUMNS": "250"},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        (summary,) = summaries(out.stdout)
        base = PausedNode(node, settings, dataset, summary.index, {})
        code = harness_main(
            [*base.argv(work / "baseline", retries=2), "--username", "elastic", "--password", password]
        )
        assert code == 0
        base.baseline = _trec(work / "baseline", "qpause")
        assert len(base.baseline) == N_QUERIES
        yield base
    finally:
        with contextlib.suppress(Exception):
            container = node.container()
            if container is not None and container.status == "paused":
                container.unpause()
        node.remove()


def _pause_once_searching(state: PausedNode, harness: Any) -> float:
    """Wait until the run's searches are under way, pause the container, return the time it happened."""
    client = state.client()
    base = search_total(client, state.index)

    def searching() -> bool:
        assert harness.proc.poll() is None, f"the run ended before the fault:\n{harness.stderr}"
        return search_total(client, state.index) > base + 20

    poll("the run's searches to start", searching, timeout_s=120, interval_s=0.05)
    container = state.node.container()
    assert container is not None
    container.pause()
    return time.monotonic()


def test_pause_beyond_the_retry_budget_fails_clearly_then_resumes(paused: PausedNode, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    retries = 2
    argv = paused.argv(run_dir, retries)
    harness = _start_with_env(argv, tmp_path / "logs", paused.env())
    container = paused.node.container()
    assert container is not None
    try:
        paused_at = _pause_once_searching(paused, harness)
        failed_with = harness.wait(timeout_s=120)
        exit_s = time.monotonic() - paused_at
    finally:
        harness.stop()
        container.reload()
        if container.status == "paused":
            container.unpause()
    err = harness.stderr
    assert failed_with == 1, err
    assert f"error: the engine stopped answering searches on {paused.index} after {retries} retries" in err
    assert "Traceback" not in err
    # every attempt waited for its timeout: the node was hung, not refusing
    assert exit_s >= (retries + 1) * TIMEOUT_S - 1, f"gave up after {exit_s:.1f}s"
    assert not (run_dir / "results.json").exists()

    wait_for("the unpaused node to answer", lambda: paused.client().cluster.health()["status"] != "red", 60)
    env = paused.env()
    code = harness_main([*argv, "--username", env["ES_USERNAME"], "--password", env["ES_PASSWORD"]])
    assert code == 0
    assert _results(run_dir)["manifest"]["status"] == "complete"
    assert _trec(run_dir, "qpause") == paused.baseline, "the resumed run ranks differently"
    print(
        f"\nfault: docker pause mid-run (timeout {TIMEOUT_S}s, {retries} retries): harness exit {failed_with} "
        f"after {exit_s:.1f}s with 'the engine stopped answering searches ... after {retries} retries'; "
        f"after unpause the same command exit 0, {len(paused.baseline)} rankings equal to the undisturbed run"
    )


def test_pause_within_the_retry_budget_resumes_after_unpause(paused: PausedNode, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    harness = _start_with_env(paused.argv(run_dir, retries=6), tmp_path / "logs", paused.env())
    container = paused.node.container()
    assert container is not None
    try:
        paused_at = _pause_once_searching(paused, harness)
        time.sleep(5)  # the fault's length: a hung node for 5 s
        container.unpause()
        code = harness.wait(timeout_s=180)
        total_s = time.monotonic() - paused_at
    finally:
        harness.stop()
        container.reload()
        if container.status == "paused":
            container.unpause()
    assert code == 0, harness.stderr
    arm = _results(run_dir)["datasets"]["qpause"]["arms"]["lexical"]
    assert arm["retries"] >= 1 and arm["queries"] == N_QUERIES
    assert _trec(run_dir, "qpause") == paused.baseline
    print(
        f"\nfault: docker pause for 5 s mid-run (timeout {TIMEOUT_S}s, up to 6 retries): harness exit 0, "
        f"{arm['retries']} retries, finished {total_s:.1f}s after the pause; rankings equal to the undisturbed run"
    )


def _start_with_env(argv: list[str], logs: Path, env: dict[str, str]) -> Any:
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return start_harness(argv, logs)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --------------------------------------------------------------------------- network loss

TRANSPORT = {"a": 9300, "b": 9301}
HTTP = {"a": 9200, "b": 9201}
DROP = ["-p", "tcp", "-m", "multiport", "--ports", "9300,9301", "-j", "DROP"]


@dataclass
class Cluster:
    containers: dict[str, Any]
    urls: dict[str, str]
    netns_pid: int
    datasets: dict[str, Path]

    def client(self, node: str, timeout_s: float = 30) -> Elasticsearch:
        return raw_es_client(  # type: ignore[no-any-return]
            self.urls[node], request_timeout=timeout_s, max_retries=0, retry_on_timeout=False
        )

    def iptables(self, action: str) -> None:
        done = subprocess.run(
            ["nsenter", "-t", str(self.netns_pid), "-n", "iptables", action, "INPUT", *DROP],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr

    def master(self) -> str:
        return str(self.client("a").cat.master(format="json")[0]["node"])


def _node_env(name: str) -> dict[str, str]:
    return {
        "node.name": name,
        "cluster.name": "r2med-pytest-partition",
        "discovery.seed_hosts": "127.0.0.1:9300,127.0.0.1:9301",
        "cluster.initial_master_nodes": "a,b",
        "http.host": "0.0.0.0",
        "http.port": str(HTTP[name]),
        "transport.host": "127.0.0.1",  # loopback: see the module docstring
        "transport.port": str(TRANSPORT[name]),
        "xpack.security.enabled": "false",
        "cluster.routing.allocation.disk.threshold_enabled": "false",
        "ES_JAVA_OPTS": "-Xms384m -Xmx384m",
    }


@pytest.fixture(scope="module")
def cluster(docker_client: Any, es_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if os.geteuid() != 0 or not (shutil.which("nsenter") and shutil.which("iptables")):
        unavailable("dropping packets between the nodes needs root, nsenter and iptables")
    names = {n: f"r2med-pytest-partition-{n}-{os.getpid()}" for n in ("a", "b")}
    ports = {n: free_port() for n in ("a", "b")}
    with removed_afterwards(docker_client, names["b"], names["a"]):
        a = docker_client.containers.run(
            es_image, detach=True, name=names["a"], environment=_node_env("a"),
            ports={f"{HTTP[n]}/tcp": ("127.0.0.1", ports[n]) for n in ("a", "b")},
        )  # fmt: skip
        b = docker_client.containers.run(
            es_image,
            detach=True,
            name=names["b"],
            environment=_node_env("b"),
            network_mode=f"container:{a.id}",
        )
        a.reload()
        state = Cluster(
            {"a": a, "b": b},
            {n: f"http://127.0.0.1:{p}" for n, p in ports.items()},
            a.attrs["State"]["Pid"],
            {},
        )

        def formed() -> bool:
            try:
                return (
                    state.client("a", 5).cluster.health(wait_for_nodes="2", timeout="1s")["number_of_nodes"]
                    == 2
                )
            except Exception:
                return False

        wait_for("the two nodes to form a cluster", formed, timeout_s=300)
        work = tmp_path_factory.mktemp("partition")
        folder = scifact_subset(work / "qnet", n_docs=300, n_test=40, n_train=5)
        # the harness's default on two nodes: one replica, so each node holds a full copy
        argv = [
            "index",
            "--dataset",
            str(folder),
            "--no-vectors",
            "--no-progress",
            "--url",
            state.urls["a"],
            "--shards",
            "2",
        ]
        assert harness_main(argv) == 0
        state.datasets["qnet"] = folder
        state.client("a").cluster.health(wait_for_status="green", timeout="60s")
        try:
            yield state
        finally:
            with contextlib.suppress(AssertionError):
                state.iptables("-D")


def _lexical(cluster: Cluster, node: str, run_dir: Path) -> subprocess.Popen[str]:
    """``harness run lexical`` on the dataset through one node, started in the background."""
    argv = [sys.executable, "-m", "harness", "run", "lexical", "--dataset", str(cluster.datasets["qnet"]),
            "--output", str(run_dir), "--records", "jsonl", "--no-progress", "--url", cluster.urls[node]]  # fmt: skip
    return subprocess.Popen(
        argv,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "250"},
    )


def _finish(proc: subprocess.Popen[str], began: float) -> tuple[int, str, float]:
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, out, time.monotonic() - began


def _copies(cluster: Cluster) -> dict[str, list[str]]:
    rows = cluster.client("a").cat.shards(index="r2med-qnet", format="json")
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(str(row["node"]), []).append(f"{row['shard']}{row['prirep']}")
    return found


def test_network_loss_between_the_nodes(cluster: Cluster, tmp_path: Path) -> None:
    master = cluster.master()
    other = "b" if master == "a" else "a"
    copies = _copies(cluster)
    assert sorted(copies) == ["a", "b"] and all(len(c) == 2 for c in copies.values()), copies
    code, out, _ = _finish(_lexical(cluster, master, tmp_path / "before"), time.monotonic())
    assert code == 0, out
    baseline = _trec(tmp_path / "before", "qnet")

    cluster.iptables("-I")
    lost_at = time.monotonic()
    via_master = _lexical(cluster, master, tmp_path / "via-master")
    via_other = _lexical(cluster, other, tmp_path / "via-other")
    outcomes: list[str] = []
    # the elected master keeps a full copy: the same rankings
    code, out, took = _finish(via_master, lost_at)
    assert code == 0, out
    assert _trec(tmp_path / "via-master", "qnet") == baseline, "rankings changed during the loss"
    outcomes.append(
        f"via the master ({master}): exit 0 after {took:.0f}s, {len(baseline)} rankings unchanged"
    )
    # the node cut off from the master: the same rankings, or a clear error
    code, out, took = _finish(via_other, lost_at)
    if code == 0:
        assert _trec(tmp_path / "via-other", "qnet") == baseline, "rankings changed on the cut-off node"
    else:
        assert code == 1 and "Traceback" not in out, out
        assert "error: " in out and cluster.urls[other] in out, out  # a one-line error naming the node
    outcomes.append(f"via the cut-off node ({other}): exit {code} after {took:.0f}s: {_last_line(out)}")

    cluster.iptables("-D")
    wait_for(
        "the cluster to heal", lambda: cluster.client(master, 5).cluster.health()["number_of_nodes"] == 2, 180
    )
    joined = "\n  ".join(outcomes)
    print(f"\nfault: transport packets between the two nodes dropped:\n  {joined}")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
