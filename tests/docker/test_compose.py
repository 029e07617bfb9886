"""docker-compose.yml: valid for Compose 1.29 (``docker-compose config -q``) and structurally what we promise.

Structure only; tests/docker/test_compose_stack.py brings the stack up.
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
ELASTICSEARCH_VERSION = ENGINES["elasticsearch"].version
COMPOSE = shutil.which("docker-compose")
needs_compose = pytest.mark.skipif(COMPOSE is None, reason="docker-compose (Debian package) is not installed")


def _copy(tmp_path: Path) -> Path:
    work = tmp_path / "stack"
    work.mkdir()
    shutil.copy(REPO / "docker-compose.yml", work)
    shutil.copytree(
        REPO / "docker", work / "docker", ignore=shutil.ignore_patterns("*_password", "*_key", "*.env")
    )
    return work


def _config(work: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ES_", "KIBANA_", "ELASTIC_"))}
    return subprocess.run(
        [str(COMPOSE), "config", *args],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**clean, **(env or {})},
    )


@needs_compose
def test_compose_config_validates_with_nothing_prepared(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    assert not (work / ".env").exists()
    done = _config(work, "-q")
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr  # no variable left unset


@needs_compose
def test_compose_config_rejects_a_schema_error(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    compose = work / "docker-compose.yml"
    compose.write_text(compose.read_text().replace("    healthcheck:\n", "    healthchek:\n", 1))
    assert _config(work, "-q").returncode != 0  # the validator does check the schema


@needs_compose
def test_resolved_stack_is_secured_local_and_pinned(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    done = _config(work)
    assert done.returncode == 0, done.stderr
    _check_stack(yaml.safe_load(done.stdout))


@needs_compose
def test_images_and_ports_follow_the_variables(tmp_path: Path) -> None:
    work = _copy(tmp_path)
    env = {"ES_IMAGE": "r2med/elasticsearch:ci", "KIBANA_IMAGE": "r2med/kibana:ci", "ES_PORT": "9333"}
    done = _config(work, env=env)
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    assert {services[n]["image"] for n in ("setup", "elasticsearch", "kibana-setup", "kibana-import")} == {
        "r2med/elasticsearch:ci"
    }
    assert services["kibana"]["image"] == "r2med/kibana:ci"
    assert _env(services["setup"])["ES_PORT"] == "9333"
    (port,) = services["elasticsearch"]["ports"]
    published = port.get("published") if isinstance(port, dict) else str(port).split(":")[1]
    assert str(published) == "9333"


def test_compose_file_structure_without_docker() -> None:
    # the raw file parses as YAML on its own (variables stay as ${...} strings): same structural checks
    _check_stack(yaml.safe_load((REPO / "docker-compose.yml").read_text()), resolved=False)


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def _check_harness(harness: dict[str, Any], resolved: bool) -> None:
    """Issue 28, the compose path: the harness container starts once Elasticsearch is healthy, reaches it by
    its service name with the credentials setup writes for it, publishes no port, and its image is built
    from the checkout where it cannot be pulled."""
    assert harness["image"] == (
        "r2med/harness:0.1.0" if resolved else "${HARNESS_IMAGE:-r2med/harness:0.1.0}"
    )
    assert harness["build"]["dockerfile"] == "docker/harness/Dockerfile"
    assert harness["depends_on"]["elasticsearch"]["condition"] == "service_healthy"
    assert _env(harness)["R2MED_STACK_ENV"] == "/credentials/container.env"
    assert harness.get("ports") is None
    targets = [v.split(":")[1] if isinstance(v, str) else v["target"] for v in harness["volumes"]]
    assert {"/credentials", "/harness/runs"} <= set(targets)


def _check_stack(stack: dict[str, Any], resolved: bool = True) -> None:
    services = stack["services"]
    assert set(services) == {"setup", "elasticsearch", "harness", "kibana-setup", "kibana", "kibana-import"}
    _check_harness(services["harness"], resolved)
    images = {name: s["image"] for name, s in services.items() if name != "harness"}
    official_es = f"docker.elastic.co/elasticsearch/elasticsearch:{ELASTICSEARCH_VERSION}"
    if resolved:
        assert images.pop("kibana") == f"docker.elastic.co/kibana/kibana:{ELASTICSEARCH_VERSION}"
        assert set(images.values()) == {official_es}
    else:
        assert (
            images.pop("kibana")
            == f"${{KIBANA_IMAGE:-docker.elastic.co/kibana/kibana:{ELASTICSEARCH_VERSION}}}"
        )
        assert set(images.values()) == {f"${{ES_IMAGE:-{official_es}}}"}

    # `docker compose up` starts setup + elasticsearch; the Kibana services need --profile kibana
    for name in ("kibana-setup", "kibana", "kibana-import"):
        assert services[name]["profiles"] == ["kibana"], name
    for name in ("setup", "elasticsearch", "harness"):
        assert not services[name].get("profiles"), name

    # no password in the file: generated by setup, read from files
    es_env = _env(services["elasticsearch"])
    assert es_env["xpack.security.enabled"] == "true"
    assert es_env["ELASTIC_PASSWORD_FILE"] == "/credentials/elastic_password"
    assert "ELASTIC_PASSWORD" not in es_env
    assert _env(services["setup"]).get("ELASTIC_PASSWORD", "") in ("", "${ELASTIC_PASSWORD:-}")
    assert "ELASTICSEARCH_PASSWORD" not in _env(services["kibana"])
    assert _env(services["kibana"])["ELASTICSEARCH_USERNAME"] == "kibana_system"
    for name in ("setup", "elasticsearch", "kibana-setup", "kibana", "kibana-import"):
        targets = [v.split(":")[1] if isinstance(v, str) else v["target"] for v in services[name]["volumes"]]
        assert "/credentials" in targets, (name, targets)

    for name in ("elasticsearch", "kibana"):
        ports = services[name]["ports"]
        assert ports, name
        for port in ports:
            host_ip = port.get("host_ip") if isinstance(port, dict) else str(port).split(":")[0]
            assert host_ip == "127.0.0.1", f"{name} publishes {port} beyond localhost"
        assert "healthcheck" in services[name]
    for name in ("setup", "kibana-setup", "kibana-import"):
        assert services[name].get("ports") is None
        assert services[name]["restart"] in ("no", False)
    assert services["setup"]["network_mode"] == "none"

    def condition(service: str, dep: str) -> str:
        return str(services[service]["depends_on"][dep]["condition"])

    assert condition("elasticsearch", "setup") == "service_completed_successfully"
    assert condition("kibana-setup", "elasticsearch") == "service_healthy"
    assert condition("kibana", "kibana-setup") == "service_completed_successfully"
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
    # passwords never travel on a command line (curl -K - reads them from stdin)
    for script in ("set-kibana-password.sh", "import-kibana-objects.sh"):
        assert "-u " not in (REPO / "docker" / "setup" / script).read_text(), script


def test_no_credentials_are_committed() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "docker/credentials", ".env", ".env.example"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    assert tracked.stdout.split() == ["docker/credentials/.gitignore"]
    ignored = (REPO / "docker" / "credentials" / ".gitignore").read_text().split()
    assert "*" in ignored and "!.gitignore" in ignored
