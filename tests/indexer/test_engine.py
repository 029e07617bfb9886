"""The managed local node, against the real distribution (nothing mocked)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from base import is_root
from harness.cli import main
from indexer import ConnectionSettings, ManagedNode, connect
from indexer.node import (
    DistributionNotFoundError,
    JavaNotFoundError,
    NodeDiedError,
    PortInUseError,
    find_distribution,
    find_java,
)
from tests._nodes import ManagedNodes
from tests._support import test_engine_config

JDK17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_find_java_picks_21_or_newer() -> None:
    rt = find_java()
    assert rt.major >= 21
    assert (rt.home / "bin" / "java").is_file()


@pytest.mark.skipif(not JDK17.is_dir(), reason="needs a Java 17 JDK to prove the too-old error")
def test_java_too_old_is_a_clear_error() -> None:
    with pytest.raises(JavaNotFoundError, match=r"is Java 17.*needs Java 21 or newer"):
        find_java(env={"ES_JAVA_HOME": str(JDK17)})


def test_java_home_that_is_not_java(tmp_path: Path) -> None:
    with pytest.raises(JavaNotFoundError, match=r"is not a Java installation \(expected .*/bin/java\)"):
        find_java(env={"ES_JAVA_HOME": str(tmp_path)})


def test_missing_distribution_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(DistributionNotFoundError, match=r"scripts/fetch-elasticsearch"):
        find_distribution(None, tmp_path / "cache", env={"HOME": str(tmp_path)})
    with pytest.raises(DistributionNotFoundError, match=r"not found or not readable at .*nope.zip"):
        find_distribution(tmp_path / "nope.zip", tmp_path)


@pytest.mark.parametrize(
    ("engine", "archive", "version"),
    [
        ("elasticsearch", "elasticsearch-7.17.29.zip", "7.17.29"),
        ("elasticsearch", "elasticsearch-8.19.8", "8.19.8"),
        ("opensearch", "opensearch-min-2.19.1-linux-x64.tar.gz", "2.19.1"),
        ("elasticsearch", "elasticsearch-7.17.290.zip", None),  # not pinned: the default flavour
        ("elasticsearch", "elasticsearch-8.19.8.1.zip", None),
        ("opensearch", "elasticsearch-7.17.29.zip", None),  # another engine's archive
        ("elasticsearch", "my-build.zip", None),
    ],
)
def test_an_archive_runs_as_the_version_its_name_says(
    tmp_path: Path, engine: str, archive: str, version: str | None
) -> None:
    """`harness engine start --distribution elasticsearch-7.17.29.zip` must run on 7.17's Java (17 to 21)
    and settings, not the default version's (Java 25 fails there: 'Security Manager is not supported')."""
    node = ManagedNode(test_engine_config(engine=engine, distribution=tmp_path / archive))
    default = ManagedNode(test_engine_config(engine=engine)).flavour
    assert node.flavour.name == engine
    assert node.flavour.version == (version or default.version)
    if version is not None and version.startswith(("7.", "8.", "2.")):
        assert node.flavour.max_java == 21


def test_port_taken_by_a_stranger() -> None:
    port = _free_port()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", port))
        listener.listen()
        node = ManagedNode(test_engine_config(name="pytest-port", port=port))
        with pytest.raises(PortInUseError, match=rf"port {port} .* already in use"):
            node.start()


def test_node_that_dies_shows_its_log(managed_nodes: ManagedNodes) -> None:
    node = managed_nodes.node(
        test_engine_config(name="pytest-dies", port=_free_port(), settings={"no.such.setting": "x"})
    )
    try:
        with pytest.raises(
            NodeDiedError, match=r"exited with code 1 while starting: .*unknown setting \[no\.such\.setting\]"
        ):
            node.start()
    finally:
        node.stop()


def test_start_status_stop_idempotent(
    capsys: pytest.CaptureFixture[str], managed_nodes: ManagedNodes
) -> None:
    port = _free_port()
    env = {"R2MED_ENGINE_PORT": str(port)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        assert main(["engine", "start", "--name", "pytest-cli"]) == 0
        out = capsys.readouterr().out
        assert f"Elasticsearch started: http://127.0.0.1:{port}" in out
        node = managed_nodes.node(test_engine_config(name="pytest-cli", port=port))
        first_pid = node.status().pid
        assert main(["engine", "start", "--name", "pytest-cli"]) == 0
        assert "already running" in capsys.readouterr().out
        assert node.status().pid == first_pid
        assert main(["engine", "status", "--name", "pytest-cli"]) == 0
        out = capsys.readouterr().out
        assert "version 9." in out and "health green" in out and "retrievers: rrf=" in out
        caps = connect(ConnectionSettings(url=f"http://127.0.0.1:{port}")).probe()
        assert caps.version.startswith("9.")
        if is_root():
            owner = pwd.getpwuid(os.stat(f"/proc/{first_pid}").st_uid).pw_name
            assert owner == "r2med-es", "as root the node must run as the unprivileged user"
        assert main(["engine", "stop", "--name", "pytest-cli"]) == 0
        assert "stopped" in capsys.readouterr().out
        assert not node.status().running
        assert main(["engine", "stop", "--name", "pytest-cli"]) == 0
        assert "was not running" in capsys.readouterr().out
        assert main(["engine", "status", "--name", "pytest-cli"]) == 3
    finally:
        ManagedNode(test_engine_config(name="pytest-cli", port=port)).stop()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# marked by hand: its node is started as another user (runuser ... python -m harness engine start), so no
# fixture of this session makes or reaches it (the marks of every other test come from its fixtures)
@pytest.mark.engine
@pytest.mark.slow
@pytest.mark.skipif(
    not is_root() or shutil.which("runuser") is None, reason="needs root to switch to an ordinary user"
)
def test_engine_as_an_ordinary_user() -> None:
    user = "r2med-tester"
    if subprocess.run(["id", user], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--create-home", "--shell", "/bin/bash", user], check=True)
    dist = find_distribution(None, test_engine_config().cache_dir)
    base = Path(tempfile.mkdtemp(prefix="r2med-user-test-"))  # pytest's tmp_path is private to root
    os.chmod(base, 0o755)
    home = base / "home"
    home.mkdir()
    shared_dist = home / dist.name
    shutil.copy(dist, shared_dist)
    subprocess.run(["chown", "-R", user, str(home)], check=True)
    port = _free_port()
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "R2MED_ES_DISTRIBUTION": str(shared_dist),
        "R2MED_ENGINE_PORT": str(port),
    }
    # the venv's interpreter may live under /root (not traversable by others): use the system
    # interpreter of the same minor version with the venv's packages on its path
    repo = Path(__file__).resolve().parents[2]
    system_python = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    if not system_python.is_file():
        pytest.skip(f"needs {system_python} to run the CLI as another user")
    site = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
    env["PYTHONPATH"] = f"{repo}:{site}"
    harness = [str(system_python), "-m", "harness"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            # the ordinary user's own default folders: not the state/cache folders this session may export
            [
                "runuser",
                "-u",
                user,
                "--",
                "env",
                "-u",
                "R2MED_HARNESS_STATE",
                "-u",
                "R2MED_HARNESS_CACHE",
                *[f"{k}={v}" for k, v in env.items()],
                *harness,
                *args,
            ],
            capture_output=True,
            text=True,
            cwd=repo,
            timeout=300,
        )

    try:
        started = run("engine", "start")
        assert started.returncode == 0, started.stderr + started.stdout
        assert f"127.0.0.1:{port}" in started.stdout
        status = run("engine", "status")
        assert status.returncode == 0 and "health green" in status.stdout, status.stderr
        stopped = run("engine", "stop")
        assert stopped.returncode == 0 and "stopped" in stopped.stdout
    finally:
        run("engine", "stop")
        shutil.rmtree(base, ignore_errors=True)
