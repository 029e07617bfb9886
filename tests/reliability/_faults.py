"""Helpers for the fault, backpressure and bad-input tests: one shared killable node, the harness as a
subprocess, bounded polling, exact id scans and the index summary line.

The fault node is started once per test session (node starts take ~30 s on two cores) and shared by
``test_backpressure``, ``test_faults_index`` and ``test_faults_query``: they kill and restart it, so
it is never the session's ``es_client`` node. Its write thread pool is one thread with a queue of
one, so concurrent bulk requests are rejected with 429 (the backpressure test relies on that; the
fault tests send with one worker, which never overflows it).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch, NotFoundError
from elasticsearch.exceptions import GeneralAvailabilityWarning

from indexer import ManagedNode
from tests._docker import wait_for
from tests._nodes import ManagedNodes
from tests._support import REPO, raw_es_client, test_engine_config
from tests.reliability._nodes import HEAP, free_port

#: a write pool this small rejects concurrent bulk requests with 429 (accepted by 9.5.4: size <= cores + 1)
TINY_WRITE_POOL = {"thread_pool.write.size": 1, "thread_pool.write.queue_size": 1}

_shared: dict[str, ManagedNode] = {}


def fault_node(nodes: ManagedNodes) -> ManagedNode:
    """The session's killable node (started on first use, stopped when the session ends); running."""
    node = _shared.get("node")
    if node is None:
        cfg = test_engine_config(
            "pytest-faults", free_port(), transport_port=free_port(), settings=TINY_WRITE_POOL
        )
        node = _shared["node"] = nodes.node(replace(cfg, heap=HEAP), fresh=True)
    ensure_running(node)
    return node


def ensure_running(node: ManagedNode) -> float:
    """Start the node unless it runs; returns the seconds the start took (0 when it was up)."""
    began = time.monotonic()
    _status, started = node.start()
    return time.monotonic() - began if started else 0.0


def client_for(url: str) -> Elasticsearch:
    """A client that fails fast: polling loops must stay bounded while the node is down."""
    return raw_es_client(url, request_timeout=10, max_retries=0, retry_on_timeout=False)  # type: ignore[no-any-return]


@dataclass
class Harness:
    """``python -m harness ...`` in a child process, its output in files (no pipe can fill up)."""

    proc: subprocess.Popen[bytes]
    out: Path
    err: Path

    def wait(self, timeout_s: float) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)
            raise AssertionError(
                f"harness did not exit within {timeout_s}s; stderr:\n{self.stderr}"
            ) from None

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def _as_background_job() -> None:
    """What a shell does to a background job (``cmd &`` in a script, many CI runners): SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start_harness(argv: list[str], logs: Path, *, background: bool = False) -> Harness:
    """``python -m harness ARGV``; ``background`` starts it the way a shell starts ``cmd &`` (SIGINT ignored)."""
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / "stdout.txt", logs / "stderr.txt"
    env = {**os.environ, "COLUMNS": "250", "PYTHONUNBUFFERED": "1"}
    with out.open("wb") as fo, err.open("wb") as fe:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", *argv],
            cwd=REPO,
            stdout=fo,
            stderr=fe,
            env=env,
            preexec_fn=_as_background_job if background else None,
        )
    return Harness(proc, out, err)


def while_stopped(harness: Harness, check: Callable[[], Any], act: Callable[[], None]) -> Any:
    """Freeze the harness (SIGSTOP), run ``check`` on the frozen state, ``act`` (send a signal, kill
    the node...), then thaw it (SIGCONT). The harness cannot make progress between the check and the
    act, so a test that cuts it mid-way never depends on how fast the machine is."""
    harness.proc.send_signal(signal.SIGSTOP)
    try:
        value = check()
        act()
    finally:
        if harness.proc.poll() is None:
            harness.proc.send_signal(signal.SIGCONT)
    return value


def poll(what: str, check: Callable[[], Any], timeout_s: float, interval_s: float = 0.02) -> Any:
    """:func:`tests._docker.wait_for` at a fault test's finer interval."""
    return wait_for(what, check, timeout_s, interval_s)


def alias_target(client: Elasticsearch, alias: str) -> str | None:
    """The one index behind ``alias``, or None when there is no such alias."""
    try:
        targets = list(client.indices.get_alias(name=alias).body)
    except NotFoundError:
        return None
    assert len(targets) == 1, f"alias {alias} points at several indices: {targets}"
    return targets[0]


def live_count(client: Elasticsearch, index: str) -> int:
    """Documents in ``index`` now (refreshes first: the loader turns refreshes off); 0 if it is absent."""
    try:
        client.indices.refresh(index=index)
        return int(client.count(index=index)["count"])
    except NotFoundError:
        return 0


def all_ids(client: Elasticsearch, index: str) -> list[str]:
    """Every ``_id`` in ``index`` (search_after over the ``id`` field): duplicates would show twice."""
    client.indices.refresh(index=index)
    ids: list[str] = []
    after: list[Any] | None = None
    for _ in range(10_000):  # bounded: 5,000 per page
        kwargs: dict[str, Any] = {"search_after": after} if after else {}
        hits = client.search(
            index=index, sort=[{"id": "asc"}], size=5000, source=False, track_total_hits=False, **kwargs
        )["hits"]["hits"]
        if not hits:
            return ids
        ids += [h["_id"] for h in hits]
        after = hits[-1]["sort"]
    raise AssertionError(f"{index}: more pages than expected")


def corpus_ids(folder: Path) -> list[str]:
    import json

    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line)["_id"] for line in fh if line.strip()]


_SUMMARY = re.compile(
    r"(?P<work>built|unchanged|resumed/extended) (?P<index>\S+) → alias (?P<alias>\S+) \((?P<analysis>\w+) analysis\); "
    r"(?P<docs>[\d,]+) docs "
    r".*?indexed (?P<indexed>[\d,]+), vectors added (?P<updated>[\d,]+), already there (?P<skipped>[\d,]+);"
    r".*?bulk retries (?P<retries>\d+)"
)


@dataclass(frozen=True)
class Summary:
    work: str
    index: str
    alias: str
    docs: int
    indexed: int
    updated: int
    skipped: int
    retries: int


def summaries(stdout: str) -> Iterator[Summary]:
    """The ``harness index`` summary lines in ``stdout`` (line wrapping undone)."""
    flat = " ".join(stdout.split())
    for m in _SUMMARY.finditer(flat):
        nums = {k: int(m[k].replace(",", "")) for k in ("docs", "indexed", "updated", "skipped", "retries")}
        yield Summary(m["work"], m["index"], m["alias"], **nums)


def one_summary(stdout: str) -> Summary:
    found = list(summaries(stdout))
    assert len(found) == 1, f"expected one index summary line, found {len(found)} in:\n{stdout}"
    return found[0]


def search_total(client: Elasticsearch, index: str) -> int:
    """Searches (query phases) the node has run on ``index`` since it started."""
    stats = client.indices.stats(index=index, metric="search")
    return int(stats["indices"][index]["total"]["search"]["query_total"])


def writes_settled(client: Elasticsearch, timeout_s: float = 30) -> None:
    """Wait until the node runs no bulk task: a request sent just before its sender died still lands."""

    def idle() -> bool:
        with warnings.catch_warnings():  # the task API is "technical preview" to the client
            warnings.simplefilter("ignore", GeneralAvailabilityWarning)
            nodes = client.tasks.list(actions="indices:data/write/bulk*")["nodes"]
        return not any(n.get("tasks") for n in nodes.values())

    poll("the node's bulk tasks to finish", idle, timeout_s, interval_s=0.1)
