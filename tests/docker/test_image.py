"""The locally built Elasticsearch image keeps the official image's contract that compose relies on.

One container, started the way docker-compose.yml starts Elasticsearch (ELASTIC_PASSWORD_FILE, dotted
settings in the environment, a data volume), is checked for: the password works and a wrong one is
refused, settings from the environment apply, data lives under /usr/share/elasticsearch/data, the
server runs as uid 1000 / gid 0, curl is there, and the hunspell dictionary the stripped build needs.
The failure cases (bad file permissions, both ELASTIC_PASSWORD and its _FILE) stop in the entrypoint.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from base import ConnectionFailed, Secret
from indexer import ConnectionSettings, connect
from tests._docker import removed_afterwards, wait_for
from tests._support import raw_es_client
from tests.reliability._nodes import free_port

NAME = "r2med-pytest-image"


def _run(client: Any, image: str, name: str, **kwargs: Any) -> Any:
    return client.containers.run(image, detach=True, name=name, **kwargs)


@pytest.fixture(scope="module")
def node(
    docker_client: Any, es_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    secrets_dir = tmp_path_factory.mktemp("image-credentials")
    secrets_dir.chmod(0o750)  # as the setup service leaves docker/credentials: group 0 may enter
    password = secrets.token_urlsafe(18)
    (secrets_dir / "elastic_password").write_text(password)
    os.chmod(secrets_dir / "elastic_password", 0o640)  # what the compose setup service writes
    port = free_port()
    with removed_afterwards(docker_client, NAME, f"{NAME}-data"):
        began = time.monotonic()
        container = _run(
            docker_client,
            es_image,
            NAME,
            environment={
                "ELASTIC_PASSWORD_FILE": "/credentials/elastic_password",
                "discovery.type": "single-node",
                "xpack.security.enabled": "true",
                "cluster.name": "r2med-from-env",
                "ES_JAVA_OPTS": "-Xms512m -Xmx512m",
            },
            ports={"9200/tcp": ("127.0.0.1", port)},
            volumes={
                f"{NAME}-data": {"bind": "/usr/share/elasticsearch/data", "mode": "rw"},
                str(secrets_dir): {"bind": "/credentials", "mode": "ro"},
            },
        )
        settings = ConnectionSettings(
            url=f"http://127.0.0.1:{port}", username="elastic", password=Secret(password)
        )

        def healthy() -> Elasticsearch | None:
            container.reload()
            assert container.status == "running", container.logs(tail=40).decode(errors="replace")
            try:
                connect(settings, wait_for_status="yellow", timeout_s=1).close()
            except ConnectionFailed:
                return None
            return raw_es_client(settings)  # the image's own settings are read behind the product's back

        client = wait_for("the container to be healthy", healthy, timeout_s=240)
        yield {
            "container": container,
            "client": client,
            "settings": settings,
            "start_s": time.monotonic() - began,
        }


def test_password_file_and_dotted_settings(node: dict[str, Any]) -> None:
    client: Elasticsearch = node["client"]
    assert client.cluster.health()["cluster_name"] == "r2med-from-env"
    settings = client.nodes.info(metric="settings")["nodes"]
    (only,) = settings.values()
    assert only["settings"]["xpack"]["security"]["enabled"] == "true"
    assert only["settings"]["discovery"]["type"] == "single-node"
    paths = client.nodes.stats(metric="fs")["nodes"]
    assert [d["path"] for n in paths.values() for d in n["fs"]["data"]] == ["/usr/share/elasticsearch/data"]
    print(f"\nimage: healthy {node['start_s']:.0f}s after docker run")


def test_wrong_password_is_refused(node: dict[str, Any]) -> None:
    good: ConnectionSettings = node["settings"]
    bad = ConnectionSettings(url=good.url, username="elastic", password=Secret("not-the-password"))
    with pytest.raises(ConnectionFailed, match=r"rejected the credentials \(GET / answered HTTP 401"):
        connect(bad, wait_for_status=None)
    with pytest.raises(ConnectionFailed, match=r"HTTP 401"):
        connect(ConnectionSettings(url=good.url), wait_for_status=None)  # no credentials at all


def test_runs_as_uid_1000_gid_0_with_curl_and_hunspell(node: dict[str, Any]) -> None:
    container = node["container"]
    code, out = container.exec_run(["id", "-u"])
    assert (code, out.decode().strip()) == (0, "1000")
    code, out = container.exec_run(["id", "-g"])
    assert (code, out.decode().strip()) == (0, "0")
    processes = container.top(ps_args="-o pid,uid,gid,comm")["Processes"]
    java = [p for p in processes if p[3] == "java"]
    assert java and all(p[1:3] == ["1000", "0"] for p in java), processes
    code, out = container.exec_run(["curl", "--version"])
    assert code == 0 and out.decode().startswith("curl ")
    backend = connect(node["settings"])
    caps = backend.probe()
    backend.close()
    assert caps.analyzers["hunspell_en_US"], "the stripped build needs the hunspell dictionary in the image"


def test_password_file_with_loose_permissions_is_refused(
    docker_client: Any, es_image: str, tmp_path: Path
) -> None:
    tmp_path.chmod(0o750)
    (tmp_path / "pw").write_text("some-password")
    os.chmod(tmp_path / "pw", 0o644)
    name = f"{NAME}-loose"
    with removed_afterwards(docker_client, name):
        container = _run(
            docker_client,
            es_image,
            name,
            environment={"ELASTIC_PASSWORD_FILE": "/c/pw"},
            volumes={str(tmp_path): {"bind": "/c", "mode": "ro"}},
        )
        result = container.wait(timeout=120)
        logs = container.logs().decode(errors="replace")
    assert result["StatusCode"] != 0
    assert "must have file permissions 400, 440, 600 or 640, but actually has: 644" in logs


def test_password_and_password_file_together_are_refused(
    docker_client: Any, es_image: str, tmp_path: Path
) -> None:
    tmp_path.chmod(0o750)
    (tmp_path / "pw").write_text("some-password")
    os.chmod(tmp_path / "pw", 0o640)
    name = f"{NAME}-both"
    with removed_afterwards(docker_client, name):
        container = _run(
            docker_client,
            es_image,
            name,
            environment={"ELASTIC_PASSWORD_FILE": "/c/pw", "ELASTIC_PASSWORD": "another-one"},
            volumes={str(tmp_path): {"bind": "/c", "mode": "ro"}},
        )
        result = container.wait(timeout=120)
        logs = container.logs().decode(errors="replace")
    assert result["StatusCode"] != 0
    assert "Both ELASTIC_PASSWORD_FILE and ELASTIC_PASSWORD are set" in logs
    assert "another-one" not in logs and "some-password" not in logs
