"""docker-compose.yml: valid for Compose 1.29 (``docker-compose config -q``) and structurally what we promise."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from indexer._version import ELASTICSEARCH_VERSION

REPO = Path(__file__).resolve().parents[2]
COMPOSE = shutil.which("docker-compose")
needs_compose = pytest.mark.skipif(COMPOSE is None, reason="docker-compose (Debian package) is not installed")


def _copy(tmp_path: Path, with_env: bool = True) -> Path:
    work = tmp_path / "stack"
    work.mkdir()
    shutil.copy(REPO / "docker-compose.yml", work)
    shutil.copy(REPO / ".env.example", work)
    shutil.copytree(REPO / "docker", work / "docker")
    if with_env:
        shutil.copy(work / ".env.example", work / ".env")
    return work


def _config(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMPOSE), "config", *args], cwd=work, capture_output=True, text=True, timeout=60, check=False
    )


@needs_compose
def test_compose_config_validates_with_env_example(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    done = _config(work, "-q")
    assert done.returncode == 0, done.stderr


@needs_compose
def test_compose_config_rejects_what_it_should(tmp_path: Path) -> None:
    work = _copy(tmp_path, with_env=False)
    done = _config(work, "-q")  # no .env: the required passwords are missing
    assert done.returncode != 0 and "ELASTIC_PASSWORD" in done.stderr
    (work / ".env").write_text((work / ".env.example").read_text())
    compose = work / "docker-compose.yml"
    compose.write_text(compose.read_text().replace("    healthcheck:\n", "    healthchek:\n", 1))
    assert _config(work, "-q").returncode != 0  # the validator does check the schema


@needs_compose
def test_resolved_stack_is_secured_local_and_pinned(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    done = _config(work)
    assert done.returncode == 0, done.stderr
    _check_stack(yaml.safe_load(done.stdout))


def test_compose_file_structure_without_docker() -> None:
    # the raw file parses as YAML on its own (variables stay as ${...} strings): same structural checks
    _check_stack(yaml.safe_load((REPO / "docker-compose.yml").read_text()), resolved=False)


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def _check_stack(stack: dict[str, Any], resolved: bool = True) -> None:
    services = stack["services"]
    assert set(services) == {"elasticsearch", "setup", "kibana", "kibana-import"}
    images = {name: s["image"] for name, s in services.items()}
    assert images["elasticsearch"] == f"docker.elastic.co/elasticsearch/elasticsearch:{ELASTICSEARCH_VERSION}"
    assert images["kibana"] == f"docker.elastic.co/kibana/kibana:{ELASTICSEARCH_VERSION}"
    assert all(image.endswith(f":{ELASTICSEARCH_VERSION}") for image in images.values())

    es_env = _env(services["elasticsearch"])
    assert es_env["xpack.security.enabled"] == "true"
    if resolved:
        assert es_env["ELASTIC_PASSWORD"] == "change-me-elastic"
        assert _env(services["kibana"])["ELASTICSEARCH_PASSWORD"] == "change-me-kibana"
    assert _env(services["kibana"])["ELASTICSEARCH_USERNAME"] == "kibana_system"

    for name in ("elasticsearch", "kibana"):
        ports = services[name]["ports"]
        assert ports, name
        for port in ports:
            host_ip = port.get("host_ip") if isinstance(port, dict) else str(port).split(":")[0]
            assert host_ip == "127.0.0.1", f"{name} publishes {port} beyond localhost"
        assert "healthcheck" in services[name]
    for name in ("setup", "kibana-import"):
        assert services[name].get("ports") is None
        assert services[name]["restart"] in ("no", False)

    def condition(service: str, dep: str) -> str:
        return str(services[service]["depends_on"][dep]["condition"])

    assert condition("setup", "elasticsearch") == "service_healthy"
    assert condition("kibana", "setup") == "service_completed_successfully"
    assert condition("kibana-import", "kibana") == "service_healthy"
    assert "esdata" in stack["volumes"]
    volume_sources = [str(v).split(":")[0] if isinstance(v, str) else v.get("source") for v in
                      services["elasticsearch"]["volumes"]]  # fmt: skip
    assert "esdata" in volume_sources


def test_setup_scripts_are_valid_bash() -> None:
    for script in sorted((REPO / "docker" / "setup").glob("*.sh")):
        done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{script.name}: {done.stderr}"
    assert (REPO / "docker" / "setup" / "set-kibana-password.sh").read_text().count(
        "kibana_system/_password"
    ) == 1
