"""``docker compose up -d`` on a fresh copy of the project, then the harness with nothing exported.

The copy (docker-compose.yml and docker/) has no .env and no credentials; the stack runs the locally
built image (ES_IMAGE) on a free port (ES_PORT) under its own project name, and is brought down with
its volumes at the end. Checked: the setup service's files (modes, owner, group), the harness finding
URL and password by itself, a wrong password refused, a second ``up`` keeping the password, a password
chosen in .env taking over, and the Kibana service's start command handing Kibana the secrets from the
files (run with a stand-in for Kibana's start script: no Kibana image can be had here).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from base import ConnectionFailed
from indexer import ConnectionSettings, connect
from tests._docker import compose_command, copy_project, wait_for
from tests._support import REPO
from tests.reliability._nodes import free_port

SECRETS = ("elastic_password", "kibana_password", "kibana_encryption_key")


@dataclass
class Stack:
    work: Path
    project: str
    env: dict[str, str]
    port: int
    up_s: float

    @property
    def credentials(self) -> Path:
        return self.work / "docker" / "credentials"

    def compose(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*compose_command(), "-p", self.project, *args],
            cwd=self.work,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def harness(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``harness ...`` run from the project folder, with no ES_* variable unless given."""
        return subprocess.run(
            [sys.executable, "-m", "harness", *args],
            cwd=self.work,
            env={**self.env, "PYTHONPATH": str(REPO), "COLUMNS": "200", **(env or {})},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def settings(self) -> ConnectionSettings:
        return ConnectionSettings.resolve(env={}, stack_files=[self.credentials / "stack.env"])


def _clean_env() -> dict[str, str]:
    """This process's environment without anything that would point the harness or compose somewhere."""
    drop = ("ES_", "ELASTIC_", "KIBANA_", "COMPOSE_", "R2MED_STACK_ENV")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def _wait_healthy(stack: Stack, timeout_s: float = 300) -> None:
    def healthy() -> bool:
        try:
            connect(stack.settings(), wait_for_status="yellow", timeout_s=1).close()
        except ConnectionFailed:
            return False
        return True

    wait_for("the compose Elasticsearch to be healthy", healthy, timeout_s)


@pytest.fixture(scope="module")
def stack(es_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    work = copy_project(tmp_path_factory.mktemp("compose") / "project")
    assert not (work / ".env").exists() and not (work / "docker" / "credentials" / "stack.env").exists()
    port = free_port()
    env = {**_clean_env(), "ES_IMAGE": es_image, "ES_PORT": str(port), "ES_HEAP": "512m"}
    stack = Stack(work, f"r2med-pytest-{os.getpid()}", env, port, 0.0)
    try:
        began = time.monotonic()
        done = stack.compose("up", "-d")
        assert done.returncode == 0, done.stdout + done.stderr
        _wait_healthy(stack)
        stack.up_s = time.monotonic() - began
        yield stack
    finally:
        down = stack.compose("down", "-v", "--remove-orphans")
        assert down.returncode == 0, down.stderr


def test_setup_made_the_credentials_with_the_promised_modes(stack: Stack) -> None:
    folder = stack.credentials
    owner = folder.stat().st_uid
    assert stat.S_IMODE(folder.stat().st_mode) == 0o750 and folder.stat().st_gid == 0
    for name in SECRETS:
        info = (folder / name).stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (0o640, owner, 0), name
    assert re.fullmatch(r"[A-Za-z0-9]{24}", (folder / "elastic_password").read_text())
    assert re.fullmatch(r"[A-Za-z0-9]{48}", (folder / "kibana_encryption_key").read_text())
    info = (folder / "stack.env").stat()
    assert (stat.S_IMODE(info.st_mode), info.st_uid) == (0o600, owner)
    settings = stack.settings()
    assert settings.url == f"http://127.0.0.1:{stack.port}" and settings.username == "elastic"
    assert settings.password is not None
    assert settings.password.reveal() == (folder / "elastic_password").read_text()
    print(f"\ncompose: `up -d` to healthy in {stack.up_s:.0f}s")


def test_harness_finds_the_stack_with_nothing_exported(stack: Stack) -> None:
    done = stack.harness("indices", "list")
    assert done.returncode == 0, done.stderr


def test_wrong_password_is_refused(stack: Stack) -> None:
    done = stack.harness("indices", "list", env={"ES_USERNAME": "elastic", "ES_PASSWORD": "not-the-password"})
    assert done.returncode == 1
    assert f"http://127.0.0.1:{stack.port} rejected the credentials (GET / answered HTTP 401" in done.stderr
    assert "not-the-password" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_a_second_up_keeps_the_password(stack: Stack) -> None:
    before = (stack.credentials / "elastic_password").read_text()
    done = stack.compose("up", "-d")
    assert done.returncode == 0, done.stderr
    logs = stack.compose("logs", "--no-color", "setup").stdout
    assert "elastic_password kept" in logs
    assert (stack.credentials / "elastic_password").read_text() == before
    _wait_healthy(stack)


def test_kibana_gets_its_secrets_from_the_files(stack: Stack, es_image: str, tmp_path: Path) -> None:
    # a stand-in for the image's /usr/local/bin/kibana-docker: it checks what the start command exported
    stub = tmp_path / "kibana-docker"
    stub.write_text(
        "#!/bin/bash\n"
        '[ "$ELASTICSEARCH_PASSWORD" = "$(cat /credentials/kibana_password)" ] || { echo password differs; exit 3; }\n'
        '[ "$XPACK_ENCRYPTEDSAVEDOBJECTS_ENCRYPTIONKEY" = "$(cat /credentials/kibana_encryption_key)" ] || exit 4\n'
        '[ "$ELASTICSEARCH_USERNAME" = kibana_system ] || exit 5\n'
        "echo kibana-docker: secrets from the files\n"
    )
    stub.chmod(0o755)
    tmp_path.chmod(0o755)
    done = stack.compose(
        "run", "--rm", "--no-deps", "-v", f"{stub}:/usr/local/bin/kibana-docker:ro", "kibana",
        env={"KIBANA_IMAGE": es_image},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kibana-docker: secrets from the files" in done.stdout


def test_a_password_chosen_in_dotenv_takes_over(stack: Stack) -> None:
    chosen = "chosen-in-dotenv-" + str(os.getpid())
    (stack.work / ".env").write_text(f"ELASTIC_PASSWORD={chosen}\n")
    try:
        done = stack.compose("up", "-d", "--force-recreate", "elasticsearch")
        assert done.returncode == 0, done.stderr
        assert (stack.credentials / "elastic_password").read_text() == chosen
        _wait_healthy(stack)
        done = stack.harness("indices", "list")
        assert done.returncode == 0, done.stderr
        settings: Any = stack.settings()
        assert settings.password.reveal() == chosen
    finally:
        (stack.work / ".env").unlink()
