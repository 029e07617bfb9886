"""``harness engine start --docker``: one Elasticsearch container, through the Docker SDK.

It behaves like the managed node (:mod:`indexer.node._managed`) where the CLI can tell: one node per name,
HTTP on ``127.0.0.1:<port>`` only, ``start`` waits on cluster health (never on a fixed sleep) and
``status``/``stop``/``logs`` act only on the container that ``start`` recorded. Unlike it, security is
on: ``start`` makes a password for ``elastic`` (kept for later starts) and writes the URL and the
credentials to ``<state>/nodes/<name>/connection.env`` (mode 0600), which
:meth:`ConnectionSettings.resolve` reads when no credentials are given, so ``harness run`` needs no
exported variables. Data lives in a named volume (``r2med-harness-<name>-data``) that outlives
``stop``; the stopped container is kept for ``logs`` until the next ``start`` replaces it.

The image must follow the official image's contract (``ELASTIC_PASSWORD``, dotted settings in the
environment, data in ``/usr/share/elasticsearch/data``): Elastic's images do, and so does the one
``scripts/build-es-image`` makes.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base import ConnectionFailed, EngineError, NodeDiedError, PortInUseError, Secret
from indexer._connection import ConnectionSettings
from indexer._stack import NODE_CONNECTION_ENV, read_stack_env
from indexer._version import ELASTICSEARCH_VERSION
from indexer.backends import connect
from indexer.node._config import NodeStatus
from indexer.node._process import port_open

DEFAULT_DOCKER_IMAGE = f"docker.elastic.co/elasticsearch/elasticsearch:{ELASTICSEARCH_VERSION}"
#: label on every container and volume the harness creates: the node name
LABEL = "org.r2med-harness.node"
SUPERUSER = "elastic"
DATA_PATH = "/usr/share/elasticsearch/data"


@dataclass(frozen=True, slots=True)
class DockerEngineConfig:
    state_dir: Path
    name: str = "default"
    http_port: int = 9200
    image: str = DEFAULT_DOCKER_IMAGE
    heap: str = "1g"
    start_timeout_s: float = 180.0
    security: bool = True
    #: extra settings, given to the container as dotted environment variables
    settings: Mapping[str, str] = field(default_factory=dict)
    #: a Docker network to join (multi-node tests); None: the default bridge
    network: str | None = None

    @property
    def node_dir(self) -> Path:
        return self.state_dir / "nodes" / self.name

    @property
    def container_name(self) -> str:
        return f"r2med-harness-{self.name}"

    @property
    def volume_name(self) -> str:
        return f"r2med-harness-{self.name}-data"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"


def docker_client() -> Any:
    """A Docker SDK client that has answered a ping; a clear error when there is no daemon."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError as exc:  # pragma: no cover - docker is a dependency
        raise EngineError("the 'docker' Python package is missing (pip install docker)") from exc
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except DockerException as exc:
        raise EngineError(
            f"cannot reach the Docker daemon ({_short(exc)}): is it running? "
            "(as root: `bash scripts/docker-daemon start`; or set DOCKER_HOST)"
        ) from None
    return client


class DockerNode:
    """One Elasticsearch container described by a :class:`DockerEngineConfig`."""

    def __init__(self, config: DockerEngineConfig, client: Any | None = None) -> None:
        self.config = config
        self._docker = client

    # -- files
    @property
    def state_file(self) -> Path:
        return self.config.node_dir / "docker.json"

    @property
    def connection_file(self) -> Path:
        return self.config.node_dir / NODE_CONNECTION_ENV

    @property
    def docker(self) -> Any:
        if self._docker is None:
            self._docker = docker_client()
        return self._docker

    def _read_state(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return {}
        return data

    def container(self) -> Any | None:
        """The container ``start`` recorded, if it still exists and carries our label and name."""
        from docker.errors import NotFound

        container_id = self._read_state().get("container_id")
        if not container_id:
            return None
        try:
            found = self.docker.containers.get(container_id)
        except NotFound:
            return None
        return found if found.labels.get(LABEL) == self.config.name else None

    def connection(self) -> ConnectionSettings:
        """How to reach the node: its URL and, with security on, the ``elastic`` credentials."""
        url = str(self._read_state().get("url", self.config.url))
        if not self.connection_file.is_file():
            return ConnectionSettings(url=url)
        found = read_stack_env(self.connection_file)
        return ConnectionSettings(
            url=found.url,
            username=found.username,
            password=Secret(found.password),
            credentials_from=self.connection_file,
        )

    def status(self) -> NodeStatus:
        state = self._read_state()
        url = str(state.get("url", self.config.url))
        container = self.container()
        if container is None:
            detail = "not running" if not state else "stale state (container gone)"
            return NodeStatus(False, url, None, self.state_file, self.state_file, detail)
        container.reload()
        running = container.status == "running"
        pid = int(container.attrs["State"].get("Pid") or 0) or None
        detail = f"container {container.short_id} {container.status} ({state.get('image', '?')})"
        return NodeStatus(
            running, url, pid, self.state_file, self.state_file, detail, container=container.short_id
        )

    def logs(self, lines: int = 40) -> str:
        container = self.container()
        if container is None:
            return ""
        return bytes(container.logs(tail=lines)).decode(errors="replace").rstrip("\n")

    # -- start
    def start(self, on_wait: Callable[[float], None] | None = None) -> tuple[NodeStatus, bool]:
        """Start the container and wait until it is healthy; returns (status, started_now)."""
        current = self.status()
        if current.running:
            return current, False
        cfg = self.config
        if port_open(cfg.http_port):
            raise PortInUseError(
                f"port {cfg.http_port} on 127.0.0.1 is already in use by something this harness did not start; "
                "stop it, or choose another with --port"
            )
        self._ensure_image()
        self._remove_old_container()
        password = self._password()
        container = self._run(password)
        cfg.node_dir.mkdir(parents=True, exist_ok=True)
        state = {
            "container_id": container.id,
            "container": cfg.container_name,
            "image": cfg.image,
            "url": cfg.url,
            "http_port": cfg.http_port,
            "volume": cfg.volume_name,
            "security": cfg.security,
            "started": time.time(),
        }
        self.state_file.write_text(json.dumps(state, indent=2))
        if cfg.security:
            _write_private(
                self.connection_file,
                f"# written by `harness engine start --docker` ({cfg.container_name})\n"
                f"ES_URL={cfg.url}\nES_USERNAME={SUPERUSER}\nES_PASSWORD={password.reveal()}\n",
            )
        else:
            with contextlib.suppress(FileNotFoundError):
                self.connection_file.unlink()
        self._wait_healthy(container, on_wait)
        return self.status(), True

    def _ensure_image(self) -> None:
        from docker.errors import DockerException, ImageNotFound

        try:
            self.docker.images.get(self.config.image)
            return
        except ImageNotFound:
            pass
        try:
            self.docker.images.pull(self.config.image)
        except DockerException as exc:
            raise EngineError(
                f"image {self.config.image} is not on this machine and could not be pulled ({_short(exc)}); "
                "pass --image (env R2MED_ES_IMAGE), or build one with `bash scripts/build-es-image`"
            ) from None

    def _remove_old_container(self) -> None:
        from docker.errors import NotFound

        try:
            old = self.docker.containers.get(self.config.container_name)
        except NotFound:
            return
        if old.labels.get(LABEL) != self.config.name:
            raise EngineError(
                f"a container named {self.config.container_name} exists and was not started by the harness; "
                "remove it, or choose another --name"
            )
        old.remove(force=True)

    def _password(self) -> Secret:
        """The password of earlier starts (the data volume may hold its users), else a new one."""
        if self.connection_file.is_file():
            return Secret(read_stack_env(self.connection_file).password)
        return Secret(secrets.token_urlsafe(18))

    def _run(self, password: Secret) -> Any:
        cfg = self.config
        environment = {
            "node.name": cfg.name,
            "discovery.type": "single-node",
            "xpack.security.enabled": "true" if cfg.security else "false",
            "xpack.security.http.ssl.enabled": "false",
            "xpack.security.transport.ssl.enabled": "false",
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            "action.destructive_requires_name": "false",
            "ES_JAVA_OPTS": f"-Xms{cfg.heap} -Xmx{cfg.heap}",
        }
        if cfg.security:
            environment["ELASTIC_PASSWORD"] = password.reveal()
        environment.update(cfg.settings)
        environment = {k: v for k, v in environment.items() if v}  # an empty value removes a default
        self.docker.volumes.create(cfg.volume_name, labels={LABEL: cfg.name})
        from docker.errors import APIError

        try:
            return self.docker.containers.run(
                cfg.image,
                detach=True,
                name=cfg.container_name,
                labels={LABEL: cfg.name},
                environment=environment,
                ports={"9200/tcp": ("127.0.0.1", cfg.http_port)},
                volumes={cfg.volume_name: {"bind": DATA_PATH, "mode": "rw"}},
                network=cfg.network,
            )
        except APIError as exc:
            raise EngineError(f"Docker could not start {cfg.container_name}: {_short(exc)}") from None

    def _wait_healthy(self, container: Any, on_wait: Callable[[float], None] | None) -> None:
        settings = self.connection()
        began = time.monotonic()
        deadline = began + self.config.start_timeout_s
        last: ConnectionFailed | None = None
        while time.monotonic() < deadline:
            container.reload()
            if container.status in {"exited", "dead"}:
                code = container.attrs["State"].get("ExitCode")
                raise NodeDiedError(
                    f"the Elasticsearch container {container.short_id} exited with code {code} while starting. "
                    f"Last log lines:\n{self.logs()}"
                )
            try:
                connect(settings, wait_for_status="yellow", timeout_s=1).close()
                return
            except ConnectionFailed as exc:
                last = exc
            if on_wait:
                on_wait(time.monotonic() - began)
            time.sleep(0.5)
        self.stop()
        raise NodeDiedError(
            f"Elasticsearch in container {container.short_id} did not become healthy within "
            f"{self.config.start_timeout_s:.0f}s ({last}); stopped it. Last log lines:\n{self.logs()}"
        )

    # -- stop
    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop the container ``start`` recorded; returns False when none was running."""
        container = self.container()
        if container is None or container.status != "running":
            return False
        container.stop(timeout=int(timeout_s))
        return True

    def remove(self) -> None:
        """Remove the container, its data volume and the node's files (tests; never automatic)."""
        from docker.errors import NotFound

        container = self.container()
        if container is not None:
            container.remove(force=True)
        with contextlib.suppress(NotFound):
            volume = self.docker.volumes.get(self.config.volume_name)
            if volume.attrs.get("Labels", {}).get(LABEL) == self.config.name:
                volume.remove(force=True)
        for path in (self.state_file, self.connection_file):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (created 0600, then renamed into place)."""
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    tmp.replace(path)


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 300 else text[:300] + "…"
