"""The version matrix: Elasticsearch 7.17.29, 8.19.8 and 9.5.4, OpenSearch 2.19.1 and 3.5.0, from Maven Central.

On each version the harness runs the hybrid mode on the same slice of SciFact (the standard analysis chain,
which every build has, so the figures are comparable), and the test checks:

* the arms that ran are those the version supports (``arm_support`` over its own probe), and each arm it
  skips or cannot run was named in one line with the probe's reason;
* the figures agree with 9.5.4's: lexical per query (the same BM25 ranking), vector and hybrid within a
  small tolerance where the version has kNN (HNSW on 200 documents with 1000 candidates is exhaustive);
* the probe's features are the declarations' for the modules the node lists.

Each node starts once per session (9.5.4 and 3.5.0 are the session's own engines), small heap, 200 documents.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main as harness_main
from harness.results import RunResults
from harness.strategies import ARMS, MODES, arm_support
from indexer import Backend, ConnectionSettings, connect
from indexer.backends._features import declared_features
from indexer.node import find_java
from indexer.node.flavours import engine_version
from tests._nodes import ManagedNodes
from tests._support import fetch_artifact, scifact_subset, test_engine_config

MATRIX = [
    ("elasticsearch", "7.17.29"),
    ("elasticsearch", "8.19.8"),
    ("elasticsearch", "9.5.4"),
    ("opensearch", "2.19.1"),
    ("opensearch", "3.5.0"),
]
SESSION = {("elasticsearch", "9.5.4"): "es_settings", ("opensearch", "3.5.0"): "os_settings"}
CHAIN = "standard"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def matrix_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("matrix") / "matrix-slice", n_docs=200, n_test=25, n_train=0
    )


@pytest.fixture(scope="session", params=MATRIX, ids=[f"{e}-{v}" for e, v in MATRIX])
def matrix_node(request: pytest.FixtureRequest, managed_nodes: ManagedNodes) -> Iterator[Backend]:
    """A node of each version, started once (the session's engines for the pinned versions)."""
    engine, version = request.param
    if (engine, version) in SESSION:
        settings: ConnectionSettings = request.getfixturevalue(SESSION[(engine, version)])
        backend = connect(settings)
        yield backend
        backend.close()
        return
    flavour = engine_version(engine, version)
    config = test_engine_config(
        name=f"pytest-matrix-{engine}-{version}",
        port=_free_port(),
        engine=engine,
        distribution=fetch_artifact(flavour.distribution),
        java_home=find_java(flavour=flavour).home,
        plugins=(),
    )
    config = dataclasses.replace(config, heap="512m")
    node = managed_nodes.node(config, flavour, fresh=True)
    status, _ = node.start()
    backend = connect(ConnectionSettings(url=status.url))
    try:
        yield backend
    finally:
        backend.close()
        node.stop()


def _run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = harness_main(argv)
    out = capfd.readouterr()
    return code, " ".join((out.out + " " + out.err).split())


def _per_query(run_dir: Path) -> dict[str, dict[str, float]]:
    """arm -> qid -> ndcg@10."""
    out: dict[str, dict[str, float]] = {}
    for line in (run_dir / "per_query.jsonl").read_text().splitlines():
        row = json.loads(line)
        out.setdefault(row["arm"], {})[row["qid"]] = row["metrics"]["ndcg@10"]
    return out


def _hybrid(
    url: str, data: Path, out: Path, capfd: pytest.CaptureFixture[str], mode: str = "hybrid"
) -> tuple[int, str]:
    """(exit code, what the run printed and, where it finished, the notes its results hold: the first screen
    says what the engine lacks in one line, and results.json and report.md name each)."""
    argv = ["run", mode, "--dataset", str(data), "--url", url, "--output", str(out), "--quiet"]
    code, said = _run([*argv, "--records", "jsonl", "--set", f"index.analysis={CHAIN}"], capfd)
    if (out / "results.json").exists():
        said += " " + " ".join(RunResults.load(out).manifest.engine_notes())
    return code, said


@pytest.fixture(scope="session")
def reference(
    es_settings: ConnectionSettings, matrix_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, float]]:
    """9.5.4's figures on the slice (the run every version is checked against)."""
    out = tmp_path_factory.mktemp("reference") / "run"
    code = harness_main(
        [
            "run",
            "hybrid",
            "--dataset",
            str(matrix_data),
            "--url",
            es_settings.url,
            "--output",
            str(out),
            "--quiet",
            "--records",
            "jsonl",
            "--set",
            f"index.analysis={CHAIN}",
        ]
    )
    assert code == 0
    return _per_query(out)


def test_the_probe_is_the_declarations(matrix_node: Backend) -> None:
    caps = matrix_node.probe()
    declared, _ = declared_features(matrix_node.product, caps.version, caps.modules)
    assert caps.version == matrix_node.info().version
    # the probe only ever takes away what a read-only request refused (licensed retrievers, dense_vector on 7.x)
    assert {k for k, v in caps.features.items() if v} <= {k for k, v in declared.items() if v}
    assert all(caps.missing[k] for k, v in caps.features.items() if not v)


def test_every_supported_arm_runs_and_agrees_with_9_5_4(
    matrix_node: Backend,
    matrix_data: Path,
    reference: dict[str, dict[str, float]],
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caps = matrix_node.probe()
    support = {name: arm_support(ARMS[name], caps) for name in MODES["hybrid"]}
    code, said = _hybrid(matrix_node.url, matrix_data, tmp_path / "hybrid", capfd)
    for name, how in support.items():  # (a run that stops names only the reason it stops)
        if how.skipped and support["vector"].runs:
            assert f"arm {name} is skipped: {how.why}" in said
        if how.exact:
            assert f"arm {name} runs as exact kNN: {how.why}" in said
    if support["vector"].how == "fails":  # no kNN at all: the run stops with the reason, lexical still runs
        assert code != 0 and support["vector"].why in said and "Traceback" not in said
        code, said = _hybrid(matrix_node.url, matrix_data, tmp_path / "lexical", capfd, mode="lexical")
        assert code == 0, said
        ran = _per_query(tmp_path / "lexical")
        assert set(ran) == {"lexical"}
    else:
        assert code == 0, said
        ran = _per_query(tmp_path / "hybrid")
        assert set(ran) == {name for name, how in support.items() if how.runs}
    assert (
        RunResults.load(tmp_path / ("lexical" if "vector" not in ran else "hybrid")).manifest.analysis
        == CHAIN
    )
    assert ran["lexical"] == reference["lexical"], "the same BM25 ranking on every version and engine"
    for arm in ("vector", "hybrid"):
        if arm in ran:
            mean, ref = (
                sum(ran[arm].values()) / len(ran[arm]),
                sum(reference[arm].values()) / len(reference[arm]),
            )
            assert abs(mean - ref) < 0.01, f"{arm}: {mean:.4f} here, {ref:.4f} on 9.5.4"
