"""The marks and the marker guard (tests/conftest.py, tests/_guard.py): an unmarked test cannot reach an
engine or Docker, nor load an embedding model, and the marks follow the fixtures a test takes."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from indexer.embed import BACKENDS, ModelSpec
from tests._guard import Guard, classify_address, classify_command
from tests._nodes import ManagedNodes


def test_an_unmarked_test_cannot_reach_an_engine_port() -> None:
    """Refused before the kernel sees it (this test is unmarked too: the session's guard would fail it if a
    connection got through)."""
    guard = Guard(allowed=set())
    with guard.installed(), socket.socket() as sock:
        with pytest.raises(ConnectionRefusedError, match=r"marker guard refused .*no `engine` mark"):
            sock.connect(("127.0.0.1", 9299))
        with pytest.raises(ConnectionRefusedError, match="marker guard"):
            socket.create_connection(("localhost", 9201), timeout=5)
    assert guard.reached[0] == "a connection to ('127.0.0.1', 9299) (engine)"
    assert len(guard.reached) >= 2 and all(r.endswith("(engine)") for r in guard.reached)


def test_other_connections_go_through() -> None:
    """The guard refuses only what needs a mark: a loopback server on an ephemeral port answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        guard = Guard(allowed=set())
        with guard.installed(), socket.create_connection(listener.getsockname(), timeout=5):
            pass
    assert guard.reached == []


def test_docker_and_engine_processes_need_their_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = Guard(allowed=set())
    with guard.installed():
        with socket.socket(socket.AF_UNIX) as sock, pytest.raises(ConnectionRefusedError, match="`docker`"):
            sock.connect("/var/run/docker.sock")
        with pytest.raises(ConnectionRefusedError, match="no `engine` mark"):
            subprocess.Popen(["/opt/es/bin/elasticsearch"])
        with pytest.raises(ConnectionRefusedError, match="no `docker` mark"):
            subprocess.run(["docker", "ps"], check=False)
        assert subprocess.run(["true"], check=False).returncode == 0
    assert len(guard.reached) == 3
    monkeypatch.setenv("DOCKER_HOST", "unix:///tmp/other-docker.sock")
    monkeypatch.setenv("ES_URL", "https://search.example:9443")
    assert classify_address(socket.AF_UNIX, "/tmp/other-docker.sock") == "docker"
    assert classify_address(socket.AF_INET, ("search.example", 9443)) == "engine"
    assert classify_address(socket.AF_INET, ("search.example", 443)) is None
    assert classify_address(socket.AF_INET6, ("::1", 9300, 0, 0)) == "engine"
    assert classify_command(["/usr/share/opensearch/bin/opensearch", "-d"]) == "engine"
    assert classify_command("docker-compose config -q") is None  # Compose's config reads files only


def test_what_the_marks_allow_passes_and_the_classes_are_restored() -> None:
    before = (socket.socket.__dict__.get("connect"), subprocess.Popen.__init__)
    guard = Guard(allowed={"engine"})
    with guard.installed():
        guard.refuse("engine", "a connection to ('127.0.0.1', 9201)")  # allowed: no error
        with pytest.raises(ConnectionRefusedError, match="no `docker` mark"):
            guard.refuse("docker", "a connection to '/run/docker.sock'")
    assert guard.reached == ["a connection to '/run/docker.sock' (docker)"]
    assert (socket.socket.__dict__.get("connect"), subprocess.Popen.__init__) == before


def test_this_test_is_unmarked(request: pytest.FixtureRequest) -> None:
    assert not any(request.node.get_closest_marker(m) for m in ("engine", "docker", "slow", "model"))


def test_a_model_load_needs_the_model_mark(tmp_path: Path) -> None:
    """Refused before the runtime is imported (seconds), whichever backend is asked; the classes are restored."""
    spec = ModelSpec(model_id="local/any", path_or_name=str(tmp_path), revision="x")
    before = {name: type(backend).__dict__.get("load") for name, backend in BACKENDS.items()}
    guard = Guard(allowed=set())
    with guard.installed():
        for backend in BACKENDS.values():
            with pytest.raises(ConnectionRefusedError, match="no `model` mark"):
                backend.load(spec, "cpu", tmp_path)
    assert guard.reached[0] == f"loading the model 'local/any' on {next(iter(BACKENDS))} (model)"
    assert len(guard.reached) == len(BACKENDS) >= 3
    assert {name: type(backend).__dict__.get("load") for name, backend in BACKENDS.items()} == before


def test_the_real_model_marks_its_tests(minilm: ModelSpec, request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("model") and not request.node.get_closest_marker("engine")
    assert minilm.model_id.endswith("all-MiniLM-L6-v2")


def test_managed_nodes_marks_engine_and_slow(
    managed_nodes: ManagedNodes, request: pytest.FixtureRequest
) -> None:
    """Taking the fixture is enough (this test starts no node): the fast loop leaves it out."""
    assert request.node.get_closest_marker("engine") and request.node.get_closest_marker("slow")
    assert not request.node.get_closest_marker("docker")


def test_engine_fixtures_mark_through_other_fixtures(engine_url: str, request: pytest.FixtureRequest) -> None:
    """``engine_url`` comes through ``backend`` and ``engine_settings``: the whole closure counts."""
    assert request.node.get_closest_marker("engine") and not request.node.get_closest_marker("slow")
    assert engine_url.startswith("http")
