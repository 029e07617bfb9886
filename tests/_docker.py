"""Docker for the tests: a daemon that answers, the locally built Elasticsearch image, compose.

Tests that need Docker take the ``docker_client`` or ``es_image`` fixture (tests/conftest.py). They
skip, with the reason, only where Docker cannot run (no daemon, no permission); with
``R2MED_REQUIRE_DOCKER=1`` (CI) that is a failure instead, so CI can never pass by skipping them.
Everything they start carries a ``pytest`` name and is removed by the test that made it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer.node.flavours import ENGINES
from tests._support import REPO

IMAGE = os.environ.get("R2MED_ES_IMAGE", f"r2med/elasticsearch:{ENGINES['elasticsearch'].version}")


def required() -> bool:
    return os.environ.get("R2MED_REQUIRE_DOCKER", "").lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail when CI requires Docker."""
    if required():
        pytest.fail(f"R2MED_REQUIRE_DOCKER is set but {reason}", pytrace=False)
    pytest.skip(reason)


def connect_docker() -> Any:
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        unavailable("the docker Python package is not installed")
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except DockerException as exc:
        unavailable(f"no Docker daemon answers ({str(exc)[:200]})")
    return client


def build_image() -> str:
    """``scripts/build-es-image`` (a no-op when the image for this content exists); the image tag."""
    if os.geteuid() != 0:
        with contextlib.suppress(Exception):
            connect_docker().images.get(IMAGE)
            return IMAGE
        unavailable(f"{IMAGE} is not built and building it needs root (debootstrap)")
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-es-image")],
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "R2MED_ES_IMAGE": IMAGE},
        check=False,
    )
    assert done.returncode == 0, f"scripts/build-es-image failed:\n{done.stdout}\n{done.stderr}"
    return IMAGE


def compose_command() -> list[str]:
    """Compose v2 (``docker compose``) where it is installed, else Debian's docker-compose 1.29."""
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    if legacy is None:
        unavailable("neither `docker compose` nor docker-compose is installed")
    return [str(legacy)]


def wait_for(what: str, check: Callable[[], Any], timeout_s: float, interval_s: float = 0.5) -> Any:
    """Call ``check`` until it returns something truthy; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


@contextlib.contextmanager
def removed_afterwards(client: Any, *names: str) -> Iterator[None]:
    """Remove containers (by name) and volumes of the given names when the block ends."""
    try:
        yield
    finally:
        from docker.errors import NotFound

        for name in names:
            with contextlib.suppress(NotFound):
                client.containers.get(name).remove(force=True, v=True)
            with contextlib.suppress(NotFound):
                client.volumes.get(name).remove(force=True)


def copy_project(dest: Path) -> Path:
    """The files ``docker compose up`` uses, copied to ``dest`` (credentials land there, not in the repo)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "docker-compose.yml", dest)
    shutil.copytree(
        REPO / "docker", dest / "docker", ignore=shutil.ignore_patterns("*_password", "*_key", "*.env")
    )
    return dest
