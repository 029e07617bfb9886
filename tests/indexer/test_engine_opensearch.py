"""The managed OpenSearch node, beside the managed Elasticsearch one (real distributions, nothing mocked)."""

from __future__ import annotations

import os
import pwd
import socket
from pathlib import Path

import pytest

from base import ConfigError, is_root
from harness.cli import main
from indexer import Backend, ConnectionSettings, ManagedNode
from indexer.node import (
    DistributionNotFoundError,
    JavaNotFoundError,
    NodeDiedError,
    PortInUseError,
    find_distribution,
    find_java,
    find_plugin,
)
from indexer.node.flavours import get_engine
from tests._nodes import ManagedNodes
from tests._support import test_engine_config

JDK17 = Path("/usr/lib/jvm/java-17-openjdk-amd64")
OPENSEARCH = get_engine("opensearch")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unknown_engine_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(
        ConfigError, match=r"unknown engine 'solr': expected one of elasticsearch, opensearch"
    ):
        get_engine("solr")
    for command in ("start", "status", "stop", "logs"):
        assert main(["engine", command, "--engine", "solr"]) == 2
        assert "unknown engine 'solr': expected one of elasticsearch, opensearch" in capsys.readouterr().err


@pytest.mark.skipif(not JDK17.is_dir(), reason="needs a Java 17 JDK to prove the too-old error")
def test_opensearch_refuses_java_17() -> None:
    with pytest.raises(
        JavaNotFoundError,
        match=r"OPENSEARCH_JAVA_HOME=.* is Java 17.*OpenSearch 3.5.0 needs Java 21 or newer",
    ):
        find_java(env={"OPENSEARCH_JAVA_HOME": str(JDK17)}, flavour=OPENSEARCH)
    assert find_java(flavour=OPENSEARCH).major >= 21


def test_missing_archives_name_the_fetch_script(tmp_path: Path) -> None:
    with pytest.raises(
        DistributionNotFoundError, match=r"no OpenSearch 3.5.0 distribution .*scripts/fetch-opensearch"
    ):
        find_distribution(None, tmp_path / "cache", env={"HOME": str(tmp_path)}, flavour=OPENSEARCH)
    with pytest.raises(
        DistributionNotFoundError,
        match=r"opensearch-knn plugin 3.5.0.0 \(needed for knn_vector .*scripts/fetch-opensearch",
    ):
        find_plugin(OPENSEARCH.plugins[0], OPENSEARCH, tmp_path / "cache", env={"HOME": str(tmp_path)})


def test_both_engines_side_by_side(es_backend: Backend, os_backend: Backend) -> None:
    """One machine, both engines at once, on their own ports: the comparison the issue asks for."""
    assert es_backend.url != os_backend.url
    assert (es_backend.product, os_backend.product) == ("elasticsearch", "opensearch")
    assert es_backend.health().status in {"green", "yellow"} and os_backend.health().status in {
        "green",
        "yellow",
    }


def test_port_held_by_the_other_managed_engine_is_named(es_settings: ConnectionSettings) -> None:
    if os.environ.get("ES_URL"):
        pytest.skip("the Elasticsearch under test is not a managed node")
    port = int(es_settings.url.rsplit(":", 1)[1])
    node = ManagedNode(test_engine_config(name="pytest-os-port", port=port, engine="opensearch"))
    with pytest.raises(
        PortInUseError, match=rf"port {port} .* in use by the managed Elasticsearch node 'pytest' \(pid \d+\)"
    ):
        node.start()


def test_node_that_dies_shows_its_log(managed_nodes: ManagedNodes) -> None:
    # the integ-test zip has no security plugin, so its setting is unknown and the node refuses to start
    config = test_engine_config(
        name="pytest-os-dies",
        port=_free_port(),
        engine="opensearch",
        settings={"plugins.security.disabled": True},
    )
    node = managed_nodes.node(config)
    try:
        with pytest.raises(
            NodeDiedError,
            match=r"OpenSearch exited with code \d+ while starting: .*unknown setting \[plugins\.security\.disabled\]",
        ):
            node.start()
    finally:
        node.stop()


def test_cli_start_status_logs_stop(capsys: pytest.CaptureFixture[str], managed_nodes: ManagedNodes) -> None:
    port, name = _free_port(), "pytest-os-cli"
    try:
        assert (
            main(
                [
                    "engine",
                    "start",
                    "--engine",
                    "opensearch",
                    "--name",
                    name,
                    "--port",
                    str(port),
                    "--heap",
                    "512m",
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert f"OpenSearch started: http://127.0.0.1:{port}" in out and "engine lucene" in out
        node = managed_nodes.node(test_engine_config(name=name, port=port, engine="opensearch"))
        pid = node.status().pid
        if is_root():
            assert pwd.getpwuid(os.stat(f"/proc/{pid}").st_uid).pw_name == "r2med-es"
        # by name alone: the node folder remembers its engine
        assert main(["engine", "status", "--name", name, "--port", str(port)]) == 0
        out = capsys.readouterr().out
        assert f"managed OpenSearch node '{name}': running" in out and "version 3.5.0 (opensearch" in out
        assert "knn=True" in out and "english" in out and "no security plugin" in out
        assert main(["engine", "start", "--engine", "elasticsearch", "--name", name]) == 2
        assert f"node '{name}' runs OpenSearch, not Elasticsearch" in capsys.readouterr().err
        assert main(["engine", "logs", "--name", name, "-n", "200"]) == 0
        assert "started" in capsys.readouterr().out
        assert main(["engine", "stop", "--name", name]) == 0
        assert f"managed OpenSearch node '{name}' stopped" in capsys.readouterr().out
        assert main(["engine", "status", "--name", name]) == 3
    finally:
        ManagedNode(test_engine_config(name=name, port=port, engine="opensearch")).stop()
