"""``harness engine start --docker``: a real container from the locally built image (nothing mocked)."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from base import ConnectionFailed, Secret, default_state_dir
from harness.cli import main
from indexer import (
    ConnectionSettings,
    DockerEngineConfig,
    DockerNode,
    EngineConfig,
    ManagedNode,
    connect,
    open_node,
)
from indexer.node import EngineError, NodeDiedError, PortInUseError
from tests._support import test_engine_config
from tests.reliability._nodes import free_port

INDEX = "pytest-docker-engine-kept"


@pytest.fixture
def name(docker_client: Any) -> Iterator[str]:
    value = f"pytest-docker-{os.getpid()}"
    yield value
    DockerNode(DockerEngineConfig(default_state_dir(), value), docker_client).remove()


def test_start_status_logs_stop_start(
    name: str, es_image: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    argv = [
        "engine",
        "start",
        "--docker",
        "--image",
        es_image,
        "--port",
        str(port),
        "--name",
        name,
        "--heap",
        "512m",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"Elasticsearch started: http://127.0.0.1:{port} (container " in out
    node = open_node(test_engine_config(name, port))
    assert isinstance(node, DockerNode)
    conn = node.connection()
    assert conn.username == "elastic" and conn.credentials_from == node.connection_file
    assert stat.S_IMODE(node.connection_file.stat().st_mode) == 0o600
    backend = connect(conn)
    with pytest.raises(ConnectionFailed, match=r"HTTP 401"):
        connect(ConnectionSettings(url=conn.url), wait_for_status=None)  # security is on
    container = node.container()
    assert container is not None
    bindings = container.attrs["HostConfig"]["PortBindings"]
    assert bindings == {"9200/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(port)}]}
    backend.create_index(INDEX, settings={}, mappings={})
    backend.close()

    assert main(argv) == 0
    assert "already running" in capsys.readouterr().out
    assert node.container().id == container.id  # type: ignore[union-attr]
    assert main(["engine", "status", "--name", name]) == 0
    out = capsys.readouterr().out
    assert f"docker node '{name}': running at http://127.0.0.1:{port}" in out and "health " in out

    # the harness finds the node's credentials with nothing exported (only the URL is given)
    monkeypatch.delenv("R2MED_STACK_ENV", raising=False)
    assert main(["indices", "list", "--url", conn.url]) == 0, capsys.readouterr().err
    capsys.readouterr()

    assert main(["engine", "stop", "--name", name]) == 0
    assert f"docker node '{name}' stopped" in capsys.readouterr().out
    assert main(["engine", "status", "--name", name]) == 3
    assert "not running" in capsys.readouterr().out
    assert main(["engine", "logs", "--name", name, "-n", "200"]) == 0
    assert f"[{name}]" in capsys.readouterr().out  # the stopped container's log is still there

    # a second start: new container, same password, same data volume
    password = conn.password.reveal() if conn.password else ""
    assert main(argv) == 0
    capsys.readouterr()
    again = node.connection()
    assert again.password is not None and again.password.reveal() == password
    assert node.container().id != container.id  # type: ignore[union-attr]
    backend = connect(again)
    assert backend.index_exists(INDEX)
    backend.close()


def test_port_taken_image_missing_name_taken(name: str, es_image: str, docker_client: Any) -> None:
    state = default_state_dir()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        taken = listener.getsockname()[1]
        node = DockerNode(DockerEngineConfig(state, name, taken, es_image), docker_client)
        with pytest.raises(PortInUseError, match=rf"port {taken} on 127.0.0.1 is already in use"):
            node.start()
    # an image that is neither here nor pullable (its registry would be 127.0.0.1:1: nothing leaves the machine)
    missing = DockerNode(
        DockerEngineConfig(state, name, free_port(), "localhost:1/r2med/none:0"), docker_client
    )
    with pytest.raises(
        EngineError, match=r"image localhost:1/r2med/none:0 is not on this machine and could not be pulled"
    ):
        missing.start()
    stranger = docker_client.containers.create(es_image, name=f"r2med-harness-{name}")
    try:
        node = DockerNode(DockerEngineConfig(state, name, free_port(), es_image), docker_client)
        with pytest.raises(EngineError, match=r"exists and was not started by the harness"):
            node.start()
    finally:
        stranger.remove(force=True)


def test_container_that_dies_shows_its_log(name: str, es_image: str, docker_client: Any) -> None:
    cfg = DockerEngineConfig(
        default_state_dir(),
        name,
        free_port(),
        es_image,
        heap="256m",
        settings={"indices.no.such.setting": "1"},
    )
    with pytest.raises(NodeDiedError, match=r"exited with code \d+ while starting") as info:
        DockerNode(cfg, docker_client).start()
    assert "indices.no.such.setting" in str(info.value)


def test_a_wrong_password_in_the_connection_file_says_where_it_came_from(
    name: str, es_image: str, docker_client: Any
) -> None:
    node = DockerNode(
        DockerEngineConfig(default_state_dir(), name, free_port(), es_image, heap="512m"), docker_client
    )
    node.start()
    wrong = node.connection_file.read_text().replace("ES_PASSWORD=", "ES_PASSWORD=x")
    node.connection_file.write_text(wrong)
    settings = ConnectionSettings.resolve({}, env={}, stack_files=[node.connection_file])
    assert isinstance(settings.password, Secret)
    with pytest.raises(ConnectionFailed, match=rf"rejected the credentials .*from {node.connection_file}"):
        connect(settings, wait_for_status=None)


def test_open_node_picks_the_last_started(tmp_path: Path) -> None:
    cfg = EngineConfig(state_dir=tmp_path, cache_dir=tmp_path, name="pick", http_port=9999)
    assert isinstance(open_node(cfg), ManagedNode)
    cfg.node_dir.mkdir(parents=True)
    (cfg.node_dir / "docker.json").write_text('{"http_port": 9555, "image": "some/image:1"}')
    node = open_node(cfg)
    assert isinstance(node, DockerNode)
    assert (node.config.http_port, node.config.image) == (9555, "some/image:1")
    (cfg.node_dir / "logs").mkdir()
    (cfg.node_dir / "logs" / "console.log").write_text("a later managed start")
    later = (cfg.node_dir / "docker.json").stat().st_mtime + 5
    os.utime(cfg.node_dir / "logs" / "console.log", (later, later))
    assert isinstance(open_node(cfg), ManagedNode)
