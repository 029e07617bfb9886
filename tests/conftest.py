"""Session fixtures: a real Elasticsearch for every integration test.

With ``ES_URL`` set, tests use that cluster (``ES_USERNAME``/``ES_PASSWORD``/
``ES_API_KEY``/``ES_CA_CERT`` apply). Otherwise the session starts a managed
node (name ``pytest``, port ``$R2MED_TEST_PORT`` or 9201) and stops it at the
end if it started it. Nothing is mocked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from indexer import ConnectionSettings, ManagedNode, connect, probe
from tests._support import R2MED_DEMO, SCIFACT, test_engine_config

_engine_report: dict[str, str] = {}


@pytest.fixture(scope="session")
def es_settings() -> Iterator[ConnectionSettings]:
    if os.environ.get("ES_URL"):
        settings = ConnectionSettings.resolve()
        _engine_report["mode"] = "external (ES_URL)"
        yield settings
        return
    node = ManagedNode(test_engine_config())
    status, started = node.start()
    _engine_report["mode"] = (
        "managed node started by the test session" if started else "managed node (already running)"
    )
    try:
        yield ConnectionSettings(url=status.url)
    finally:
        if started and not os.environ.get("R2MED_TEST_KEEP_NODE"):
            node.stop()


@pytest.fixture(scope="session")
def es_url(es_settings: ConnectionSettings) -> str:
    return es_settings.url


@pytest.fixture(scope="session")
def es_client(es_settings: ConnectionSettings) -> Elasticsearch:
    client = connect(es_settings)
    caps = probe(client)
    _engine_report.update(url=es_settings.url, version=caps.version, flavour=caps.build_flavour)
    return client


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return SCIFACT


@pytest.fixture(scope="session")
def r2med_demo_dir() -> Path:
    return R2MED_DEMO


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if "version" in _engine_report:
        terminalreporter.write_sep(
            "=",
            f"Elasticsearch under test: {_engine_report['version']} ({_engine_report['flavour']}) at "
            f"{_engine_report['url']}, {_engine_report['mode']}",
        )
