"""Session fixtures: a real Elasticsearch and a real OpenSearch for the integration tests.

With ``ES_URL`` set, tests use that cluster (``ES_USERNAME``/``ES_PASSWORD``/
``ES_API_KEY``/``ES_CA_CERT`` apply). Otherwise the session starts a managed
node (name ``pytest``, port ``$R2MED_TEST_PORT`` or 9201) and stops it at the
end if it started it. OpenSearch likewise: ``OS_URL``, or a managed node
(name ``pytest-opensearch``, port ``$R2MED_TEST_OS_PORT`` or 9211), started on
first use. ``backend`` and ``engine_settings`` are parametrized by engine: a test that takes
either runs against both real engines (the tests where the engine matters: building, running,
searching, records, administration). Nothing is mocked.

Docker: ``docker_client`` and ``es_image`` (the locally built Elasticsearch image) for the tests
that need a daemon; see tests/_docker.py for when they skip. The session ignores the connection
files of local stacks (``R2MED_STACK_ENV=none``) so that a developer's running ``docker compose``
stack never changes which cluster a test talks to; the tests of that discovery set it themselves.
``managed_nodes`` for the tests that start nodes of their own (faults, security, multi-node, other
versions, the engine lifecycle).

Marks: a test that takes an engine fixture (``ENGINE_FIXTURES``, directly or through other fixtures)
is marked ``engine``; one that takes a Docker fixture, ``docker``; one that takes ``managed_nodes``,
also ``slow``; one that takes ``minilm`` (a real embedding model) or ``model_runtime`` (torch), ``model``.
``pytest -m "not engine and not docker and not model"`` is the inner loop (docs/development.md);
``-m "not slow and not docker"`` runs everything on the session's two engines. The marker guard
(tests/_guard.py) fails an unmarked test that reaches an engine or Docker, or loads a model, anyway (an
``engine`` test may load one: it is outside the inner loop already).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from indexer import Backend, ConnectionSettings, ManagedNode, ModelSpec, connect, resolve_model
from tests._docker import build_image, connect_docker
from tests._guard import Guard, unmarked_message
from tests._nodes import ManagedNodes
from tests._openai_server import OpenAIServer, ServerState, openai_server
from tests._support import R2MED_DEMO, SCIFACT, raw_es_client, test_engine_config, test_os_port

os.environ.setdefault("R2MED_STACK_ENV", "none")

ENGINES = ("elasticsearch", "opensearch")

#: fixtures that give a real engine: a test that takes one (even through another fixture) is marked ``engine``
ENGINE_FIXTURES = frozenset(
    {
        "es_settings",
        "os_settings",
        "engine_settings",
        "backend",
        "es_backend",
        "os_backend",
        "es_url",
        "engine_url",
        "es_inspect",
        "managed_nodes",
    }
)
#: fixtures that need a Docker daemon: a test that takes one is marked ``docker``
DOCKER_FIXTURES = frozenset({"docker_client", "es_image"})
#: fixtures that load a real embedding model (MiniLM on torch, ONNX Runtime, OpenVINO) or its runtime: marked
#: ``model``
MODEL_FIXTURES = frozenset({"minilm", "model_runtime"})
#: the marks the fixtures give, each a kind of thing the marker guard refuses to a test without it
GUARDED = ("engine", "docker", "model")

_engine_report: dict[str, str] = {}
_os_report: dict[str, str] = {}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``engine``, ``docker`` and ``model`` from the fixtures each test takes (``fixturenames`` is the whole
    closure)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & ENGINE_FIXTURES:
            item.add_marker(pytest.mark.engine)
        if "managed_nodes" in names:
            item.add_marker(pytest.mark.slow)
        if names & DOCKER_FIXTURES:
            item.add_marker(pytest.mark.docker)
        if names & MODEL_FIXTURES:
            item.add_marker(pytest.mark.model)


def _guarded(item: pytest.Item) -> Generator[None, object, object]:
    """Run a test phase under the marker guard for the marks it lacks (tests/_guard.py)."""
    allowed = {mark for mark in GUARDED if item.get_closest_marker(mark)}
    if "engine" in allowed:  # outside the inner loop already: an engine test may embed with the real model
        allowed.add("model")
    guard = Guard(allowed)
    if guard.allowed == set(GUARDED):
        return (yield)
    try:
        with guard.installed():
            return (yield)
    finally:
        if guard.reached:
            pytest.fail(unmarked_message(item.nodeid, guard.reached), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _guarded(item))


@pytest.fixture(scope="session")
def managed_nodes() -> Iterator[ManagedNodes]:
    """Nodes a test starts itself, beyond the session's two (faults, security, multi-node, other versions,
    the engine lifecycle): all stopped when the session ends (tests/_nodes.py)."""
    nodes = ManagedNodes()
    yield nodes
    nodes.stop_all()


@pytest.fixture(scope="session")
def docker_client() -> Any:
    """A Docker SDK client whose daemon answered (skips, or fails under R2MED_REQUIRE_DOCKER, if none)."""
    return connect_docker()


@pytest.fixture(scope="session")
def es_image(docker_client: Any) -> str:
    """The locally built Elasticsearch image (scripts/build-es-image; cached by content hash)."""
    return build_image()


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
def os_settings() -> Iterator[ConnectionSettings]:
    if os.environ.get("OS_URL"):
        _os_report["mode"] = "external (OS_URL)"
        yield ConnectionSettings(url=os.environ["OS_URL"])
        return
    node = ManagedNode(test_engine_config(name="pytest-opensearch", port=test_os_port(), engine="opensearch"))
    status, started = node.start()
    _os_report["mode"] = (
        "managed node started by the test session" if started else "managed node (already running)"
    )
    try:
        yield ConnectionSettings(url=status.url)
    finally:
        if started and not os.environ.get("R2MED_TEST_KEEP_NODE"):
            node.stop()


@pytest.fixture(scope="session", params=ENGINES)
def engine_settings(request: pytest.FixtureRequest) -> ConnectionSettings:
    """The connection settings of each engine in turn (for tests that drive the CLI against both)."""
    settings: ConnectionSettings = request.getfixturevalue(
        "es_settings" if request.param == "elasticsearch" else "os_settings"
    )
    return settings


@pytest.fixture(scope="session")
def backend(engine_settings: ConnectionSettings) -> Iterator[Backend]:
    """The backend of each engine in turn (the same tests run against both)."""
    opened = connect(engine_settings)
    _report(opened)
    try:
        yield opened
    finally:
        opened.close()


def _report(opened: Backend) -> None:
    caps = opened.probe()
    report = _engine_report if opened.product == "elasticsearch" else _os_report
    report.update(url=opened.url, version=caps.version, flavour=caps.build_flavour)


@pytest.fixture(scope="session")
def es_backend(es_settings: ConnectionSettings) -> Iterator[Backend]:
    """Elasticsearch only: for tests about what only Elasticsearch has (retrievers, security, faults)."""
    opened = connect(es_settings)
    _report(opened)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def os_backend(os_settings: ConnectionSettings) -> Iterator[Backend]:
    opened = connect(os_settings)
    _report(opened)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def es_url(es_backend: Backend) -> str:
    return es_backend.url


@pytest.fixture(scope="session")
def es_inspect(es_settings: ConnectionSettings) -> Iterator[Any]:
    """A raw elasticsearch-py client, for tests that check what the product stored behind its back (the
    product itself only talks through a Backend)."""
    client = raw_es_client(es_settings)
    yield client
    client.close()


@pytest.fixture(scope="session")
def engine_url(backend: Backend) -> str:
    """The URL of each engine in turn (parametrized through ``backend``)."""
    return backend.url


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return SCIFACT


@pytest.fixture(scope="session")
def r2med_demo_dir() -> Path:
    return R2MED_DEMO


@pytest.fixture(scope="session")
def minilm() -> ModelSpec:
    """The packaged all-MiniLM-L6-v2, for the tests of what a real model computes (numerics: torch, ONNX
    Runtime, OpenVINO, auto's check): a test that takes it is marked ``model``. The machinery around the
    model (cache, windows, crash and resume, order) is tested with tests/_encoder.py's stand-in instead."""
    return resolve_model("minilm")


@pytest.fixture(scope="session")
def model_runtime() -> Any:
    """torch, imported (seconds of start-up, the first step of any model load): for the tests of what the
    runtime itself says (devices, a folder it cannot load); a test that takes it is marked ``model``."""
    import torch

    return torch


@pytest.fixture(scope="session")
def llm_server() -> Iterator[OpenAIServer]:
    """The OpenAI-compatible test server on 127.0.0.1 (a local stand-in: no LLM can be downloaded here)."""
    with openai_server() as server:
        yield server


@pytest.fixture()
def server(llm_server: OpenAIServer) -> Iterator[OpenAIServer]:
    """The session's test server with a fresh state (counts, faults, key, reasoning) for each test."""
    llm_server.state.__dict__.update(ServerState().__dict__)
    yield llm_server
    llm_server.state.__dict__.update(ServerState().__dict__)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if "version" in _engine_report:
        terminalreporter.write_sep(
            "=",
            f"Elasticsearch under test: {_engine_report['version']} ({_engine_report['flavour']}) at "
            f"{_engine_report['url']}, {_engine_report['mode']}",
        )
    if "version" in _os_report:
        terminalreporter.write_sep(
            "=",
            f"OpenSearch under test: {_os_report['version']} ({_os_report['flavour']}) at "
            f"{_os_report['url']}, {_os_report['mode']}",
        )
