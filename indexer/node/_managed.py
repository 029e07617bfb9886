"""A locally managed Elasticsearch or OpenSearch node: start, status, stop, logs.

The node runs from a distribution (the Maven integ-test zip, or the vendor's official archive, as an
archive or an unpacked folder) on 127.0.0.1 with an explicit heap. What differs between engines
(archive, plugins, scripts, config file, environment variables) comes from the flavour registry
(:mod:`indexer.node.flavours`). Data, logs and its own config folder live under a per-user state
folder. Start waits on cluster health, never on a fixed sleep. As root the node runs as a dedicated
unprivileged user, since both engines refuse to run as root. ``stop`` only ever stops the process
that ``start`` recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from base import NodeDiedError, PortInUseError
from indexer._connection import ConnectionSettings
from indexer.node._config import EngineConfig, NodeStatus
from indexer.node._distribution import find_distribution, find_plugin, unpack_distribution
from indexer.node._java import JavaRuntime, find_java
from indexer.node._node_dir import cluster_name, prepare_node_dir
from indexer.node._process import (
    first_error,
    health_ok,
    kill_group,
    launch,
    pid_alive,
    port_open,
    process_mentions,
    run_as,
    stop_group,
    tail,
)
from indexer.node.flavours import (
    DEFAULT_ENGINE,
    ENGINES,
    EngineFlavour,
    PluginSpec,
    distribution_flavour,
    get_engine,
)

LOG_TAIL_LINES = 40
OnWait = Callable[[float], None]


def _managed_holder(state_dir: Path, port: int) -> str | None:
    """'the managed OpenSearch node 'x' (pid n)' when a node this harness started holds ``port``."""
    for state_file in sorted((state_dir / "nodes").glob("*/node.json")):
        try:
            state = json.loads(state_file.read_text())
        except (OSError, ValueError):
            continue
        pid = int(state.get("pid", 0) or 0)
        if int(state.get("http_port", 0) or 0) == port and pid > 0 and pid_alive(pid):
            flavour = ENGINES.get(str(state.get("engine", DEFAULT_ENGINE)))
            display = flavour.display if flavour else str(state.get("engine"))
            return f"the managed {display} node {state_file.parent.name!r} (pid {pid})"
    return None


def _check_port_free(config: EngineConfig) -> None:
    if port_open(config.http_port):
        holder = _managed_holder(config.state_dir, config.http_port) or "a process this harness did not start"
        raise PortInUseError(
            f"port {config.http_port} on 127.0.0.1 is already in use by {holder}; "
            "stop it, or choose another with --port"
        )


class ManagedNode:
    """One local node described by an :class:`EngineConfig`: its flavour given, else the pinned version its
    distribution's name says (``elasticsearch-7.17.29.zip`` runs on Java 17-21), else the engine's default."""

    def __init__(self, config: EngineConfig, flavour: EngineFlavour | None = None) -> None:
        self.config = config
        default = get_engine(config.engine)
        self.flavour = flavour or distribution_flavour(default.name, config.distribution) or default

    # -- paths and state
    @property
    def state_file(self) -> Path:
        return self.config.node_dir / "node.json"

    @property
    def log_file(self) -> Path:
        return self.config.node_dir / "logs" / "console.log"

    def _read_state(self) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None
        return data

    def _owned_pid(self) -> int | None:
        """The pid recorded by our start, if that process is still the node we started."""
        state = self._read_state()
        if not state:
            return None
        pid = int(state.get("pid", 0))
        if pid <= 0 or not pid_alive(pid):
            return None
        if not process_mentions(pid, str(self.config.node_dir / "config")):
            return None  # pid reused by something else: never touch it
        return pid

    def status(self) -> NodeStatus:
        pid = self._owned_pid()
        state = self._read_state() or {}
        url = str(state.get("url", self.config.url))
        detail = "" if pid else ("not running" if not state else "stale state (process gone)")
        engine = str(state.get("engine", self.flavour.name))
        return NodeStatus(pid is not None, url, pid, self.state_file, self.log_file, detail, engine)

    def connection(self) -> ConnectionSettings:
        """How to reach the node (a managed node runs without security)."""
        return ConnectionSettings(url=self.status().url)

    def logs(self, lines: int = LOG_TAIL_LINES) -> str:
        """The tail of the node's console log (stdout and stderr, where startup errors land)."""
        for path in (self.log_file, self.config.node_dir / "logs" / f"{cluster_name(self.config)}.log"):
            if path.is_file():
                return tail(path, lines)
        return ""

    def _plugins(self) -> list[PluginSpec]:
        wanted = self.config.plugins
        if wanted is None:
            return list(self.flavour.plugins)
        return [self.flavour.plugin(name) for name in wanted]

    # -- start
    def start(self, on_wait: OnWait | None = None) -> tuple[NodeStatus, bool]:
        """Start the node and wait until it is healthy; returns (status, started_now)."""
        current = self.status()
        if current.running:
            return current, False
        _check_port_free(self.config)
        java, home, plugins = self._install()
        conf = prepare_node_dir(self.config, self.flavour, home)
        proc = self._launch(java, conf, home)
        self._record(proc.pid, java, home, plugins)
        self._wait_healthy(proc, on_wait)
        return self.status(), True

    def _install(self) -> tuple[JavaRuntime, Path, list[PluginSpec]]:
        """The Java to run with, and the distribution's home holding the plugins."""
        cfg, flavour = self.config, self.flavour
        java = find_java(cfg.java_home, flavour=flavour)
        plugins = [(p, find_plugin(p, flavour, cfg.cache_dir)) for p in self._plugins()]
        dist = find_distribution(cfg.distribution, cfg.cache_dir, flavour=flavour)
        home = unpack_distribution(dist, cfg.state_dir, flavour, plugins=plugins, java=java)
        return java, home, [p for p, _ in plugins]

    def _launch(self, java: JavaRuntime, conf: Path, home: Path) -> subprocess.Popen[bytes]:
        cfg, flavour = self.config, self.flavour
        env = dict(os.environ)
        env.update(
            {
                flavour.java_home_var: str(java.home),
                flavour.path_conf_var: str(conf),
                flavour.java_opts_var: f"-Xms{cfg.heap} -Xmx{cfg.heap}",
            }
        )
        env.pop("JAVA_HOME", None)
        owned = [cfg.node_dir, *([home] if home.is_relative_to(cfg.state_dir) else [])]
        popen = run_as(cfg.run_user, cfg.state_dir, owned)
        if popen:
            env["HOME"] = str(cfg.node_dir)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        if self.log_file.exists():  # keep the previous start's console log, start a fresh one
            self.log_file.replace(self.log_file.with_suffix(".log.1"))
        return launch([str(home / "bin" / flavour.executable)], cfg.node_dir, env, self.log_file, **popen)

    def _record(self, pid: int, java: JavaRuntime, home: Path, plugins: list[PluginSpec]) -> None:
        state = {
            "pid": pid,
            "engine": self.flavour.name,
            "url": self.config.url,
            "http_port": self.config.http_port,
            "home": str(home),
            "java": str(java.home),
            "java_version": java.version,
            "started": time.time(),
            "version": self.flavour.version,
            "plugins": [p.name for p in plugins],
        }
        self.state_file.write_text(json.dumps(state, indent=2))

    def _up(self) -> bool:
        port = self.config.http_port
        if self.config.scheme == "https":
            return port_open(port)  # secured nodes: the caller checks health with credentials
        return health_ok(f"http://127.0.0.1:{port}/_cluster/health?wait_for_status=yellow&timeout=1s")

    def _wait_healthy(self, proc: subprocess.Popen[bytes], on_wait: OnWait | None) -> None:
        start = time.monotonic()
        deadline = start + self.config.start_timeout_s
        display = self.flavour.display
        while True:
            code = proc.poll()
            if code is not None:
                raise NodeDiedError(
                    f"{display} exited with code {code} while starting: {first_error(self.logs(2000))}\n"
                    f"Last log lines ({self.log_file}):\n{self.logs()}"
                )
            if self._up():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise NodeDiedError(
                    f"{display} did not become healthy within {self.config.start_timeout_s:.0f}s; "
                    f"stopped it. Last log lines:\n{self.logs()}"
                )
            if on_wait:
                on_wait(time.monotonic() - start)
            time.sleep(0.5)

    # -- stop
    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop the node this harness started; returns False when none was running."""
        pid = self._owned_pid()
        if pid is not None:
            stop_group(pid, timeout_s)
        with contextlib.suppress(FileNotFoundError):
            self.state_file.unlink()
        return pid is not None

    def kill(self) -> None:
        """SIGKILL the node's whole process group (fault-injection tests)."""
        pid = self._owned_pid()
        if pid is not None:
            kill_group(pid)
