"""docker-compose.opensearch.yml: valid for Compose 1.29 (``docker-compose config -q``) and what we promise.

The images cannot be pulled here (no registry is reachable), so the stack itself is not brought up; the
file is validated by Compose, resolved, and checked for the same conventions as the Elasticsearch stack.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from indexer.node.flavours import ENGINES

REPO = Path(__file__).resolve().parents[2]
OPENSEARCH_VERSION = ENGINES["opensearch"].version
FILE = "docker-compose.opensearch.yml"
COMPOSE = shutil.which("docker-compose")
needs_compose = pytest.mark.skipif(COMPOSE is None, reason="docker-compose (Debian package) is not installed")


def _copy(tmp_path: Path) -> Path:
    work = tmp_path / "stack"
    work.mkdir()
    shutil.copy(REPO / FILE, work)
    shutil.copytree(REPO / "docker", work / "docker")
    return work


def _config(work: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMPOSE), "-f", FILE, "-p", "r2med-opensearch", *args],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


@needs_compose
def test_compose_config_validates_with_nothing_prepared(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    done = _config(work, "config", "-q")
    assert done.returncode == 0, done.stderr
    done = _config(work, "--profile", "dashboards", "config", "-q")
    assert done.returncode == 0, done.stderr


@needs_compose
def test_compose_validator_checks_the_schema(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    compose = work / FILE
    compose.write_text(compose.read_text().replace("    healthcheck:\n", "    healthchek:\n", 1))
    assert _config(work, "config", "-q").returncode != 0


@needs_compose
def test_resolved_stack_is_secured_local_and_pinned(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    done = _config(
        work, "--profile", "dashboards", "config", env={"OS_PORT": "9333", "DASHBOARDS_PORT": "5777"}
    )
    assert done.returncode == 0, done.stderr
    stack = yaml.safe_load(done.stdout)
    _check_stack(stack)
    ports = {
        p["published"] if isinstance(p, dict) else str(p).split(":")[1]
        for p in stack["services"]["opensearch"]["ports"]
    }
    assert {str(p) for p in ports} == {"9333"}
    assert _env(stack["services"]["setup"])["OS_PORT"] == "9333"  # stack.env names the port the harness uses


def test_compose_file_structure_without_docker() -> None:
    _check_stack(yaml.safe_load((REPO / FILE).read_text()), resolved=False)


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def _check_stack(stack: dict[str, Any], resolved: bool = True) -> None:
    services = stack["services"]
    assert set(services) == {"setup", "opensearch", "dashboards"}
    images = {name: s["image"] for name, s in services.items()}
    if resolved:
        assert images["opensearch"] == images["setup"] == f"opensearchproject/opensearch:{OPENSEARCH_VERSION}"
        assert images["dashboards"] == f"opensearchproject/opensearch-dashboards:{OPENSEARCH_VERSION}"
    assert all(image.rstrip("}").endswith(OPENSEARCH_VERSION) for image in images.values())

    os_env = _env(services["opensearch"])
    assert (
        "DISABLE_SECURITY_PLUGIN" not in os_env and "plugins.security.disabled" not in os_env
    )  # security on
    assert os_env["discovery.type"] == "single-node"
    assert services["opensearch"]["entrypoint"] == ["bash", "/setup/opensearch-start.sh"]
    assert services["dashboards"]["profiles"] == ["dashboards"]

    for name in ("opensearch", "dashboards"):
        ports = services[name]["ports"]
        assert ports, name
        for port in ports:
            host_ip = port.get("host_ip") if isinstance(port, dict) else str(port).split(":")[0]
            assert host_ip == "127.0.0.1", f"{name} publishes {port} beyond localhost"
        assert "healthcheck" in services[name]
    health = " ".join(map(str, services["opensearch"]["healthcheck"]["test"]))
    assert "curl -s -K -" in health and "admin_password" in health  # the password is not on a command line
    setup = services["setup"]
    assert (
        setup.get("ports") is None and setup["restart"] in ("no", False) and setup["network_mode"] == "none"
    )

    def condition(service: str, dep: str) -> str:
        return str(services[service]["depends_on"][dep]["condition"])

    assert condition("opensearch", "setup") == "service_completed_successfully"
    assert condition("dashboards", "opensearch") == "service_healthy"
    assert {"osdata", "ossecurity"} <= set(stack["volumes"])

    def sources(service: str) -> list[str]:
        return [
            str(v).split(":")[0] if isinstance(v, str) else str(v.get("source"))
            for v in services[service]["volumes"]
        ]

    assert "ossecurity" in sources("setup") and "ossecurity" in sources("opensearch")
    assert "osdata" in sources("opensearch")


def test_setup_scripts_are_valid_bash_and_replace_the_demo_users() -> None:
    for script in ("opensearch-security.sh", "opensearch-start.sh"):
        done = subprocess.run(
            ["bash", "-n", str(REPO / "docker" / "setup" / script)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"{script}: {done.stderr}"
    text = (REPO / "docker" / "setup" / "opensearch-security.sh").read_text()
    users = text.split('cat > "$security/internal_users.yml" <<EOF', 1)[1].split("\nEOF", 1)[0]
    top_level = [
        line.split(":")[0] for line in users.splitlines() if line and not line.startswith((" ", "#", "-"))
    ]
    assert top_level == ["_meta", "admin", "kibanaserver"]
    ignore = (REPO / "docker" / "opensearch" / "credentials" / ".gitignore").read_text().split()
    assert "*" in ignore and "!.gitignore" in ignore  # generated passwords are never committed


def test_ci_validates_the_compose_files() -> None:
    """CI (``.ci/run`` sets R2MED_CI=1) must run the Compose validations above, never skip them: the
    Debian docker-compose is one of the packages ``scripts/setup --all`` (the test command's setup) installs."""
    packages = (REPO / "scripts" / "apt-packages-dev.txt").read_text().split()
    assert "docker-compose" in packages
    assert "--all" in (REPO / "scripts" / "test").read_text()
    ci_script = (REPO / ".ci" / "run").read_text()
    assert "R2MED_CI=1" in ci_script
    if os.environ.get("R2MED_CI"):
        assert COMPOSE is not None, "CI runs without docker-compose: the compose files would go unvalidated"
