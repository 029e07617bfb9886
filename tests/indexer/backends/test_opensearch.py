"""OpenSearch only: the dialect's refusals, a cluster without the k-NN plugin, and a real 2.x cluster."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from base import CapabilityMissing, ConfigError, Secret
from harness.cli import main as harness_main
from harness.results import RunResults
from indexer import Backend, ConnectionSettings, ManagedNode, VectorSpec, connect
from indexer.backends import KNN, KnnSpec
from indexer.backends._features import declared_features
from indexer.backends._opensearch import build_client
from indexer.node import JavaNotFoundError, find_java
from tests._nodes import ManagedNodes
from tests._support import (
    LEGACY_OPENSEARCH,
    drop_indices,
    fetch_artifact,
    ndjson,
    scifact_subset,
    test_engine_config,
)

NO_KNN = "the cluster has no k-NN plugin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_faiss_asked_of_a_cluster_without_it_is_refused(os_backend: Backend) -> None:
    """The Maven k-NN zip has no native libraries (a document in a faiss field kills the node): the managed
    node says so in its attributes, the probe reports faiss missing, and the mapping is refused first."""
    caps = os_backend.probe()
    assert caps.has("lucene_engine") and not caps.has("faiss_engine")
    assert "has no native libraries (node attribute knn_faiss: false" in caps.missing["faiss_engine"]
    with pytest.raises(
        CapabilityMissing,
        match=rf"{os_backend.url} cannot build a knn_vector field on the faiss engine: expected the cluster to "
        r"have it, found the k-NN plugin of OpenSearch .* has no native libraries .*; use engine lucene",
    ):
        os_backend.vector_mapping(VectorSpec(dims=8, engine="faiss"))
    with pytest.raises(ConfigError, match=r"'nmslib' is refused: it is deprecated since OpenSearch 2.19"):
        os_backend.vector_mapping(VectorSpec(dims=8, engine="nmslib"))


def test_other_dialect_mistakes_are_clear(os_backend: Backend) -> None:
    with pytest.raises(
        ConfigError, match=r"offer the index type 'hnsw' here; 'int8_hnsw' is an Elasticsearch"
    ):
        os_backend.vector_mapping(VectorSpec(dims=8, index_type="int8_hnsw"))
    with pytest.raises(ConfigError, match=r"expected the k-NN engine lucene or faiss, found 'annoy'"):
        os_backend.vector_mapping(VectorSpec(dims=8, engine="annoy"))
    with pytest.raises(ConfigError, match=r"OpenSearch does not take Elasticsearch API keys"):
        build_client(ConnectionSettings(url=os_backend.url, api_key=Secret("abc")))


def test_knn_method_parameters_gate_is_explained() -> None:
    """The version gate's wording (a cluster with the plugin, older than the knn query we send)."""
    _, why = declared_features("opensearch", "2.11.0", ["opensearch-knn"])
    assert why[KNN] == (
        "OpenSearch 2.11.0 has no knn query with method_parameters (ef_search, the harness's num_candidates) "
        "(2.16 or newer)"
    )
    assert declared_features("opensearch", "3.5.0", [])[1][KNN].startswith(NO_KNN)


@contextlib.contextmanager
def _node(node: ManagedNode) -> Iterator[Backend]:
    status, _started = node.start()
    backend = connect(ConnectionSettings(url=status.url))
    try:
        yield backend
    finally:
        backend.close()
        node.stop()


@pytest.fixture(scope="module")
def no_knn(managed_nodes: ManagedNodes) -> Iterator[Backend]:
    """OpenSearch 3.5.0 as the fetched zip comes, without installing the k-NN plugin."""
    config = test_engine_config(name="pytest-os-no-knn", port=_free_port(), engine="opensearch", plugins=())
    with _node(managed_nodes.node(config)) as backend:
        yield backend


def test_a_cluster_without_knn_is_detected_and_lexical_still_runs(no_knn: Backend) -> None:
    caps = no_knn.probe()
    assert not caps.has(KNN) and "opensearch-knn" not in caps.modules
    assert caps.missing[KNN].startswith(NO_KNN) and any(n.startswith(NO_KNN) for n in caps.notes)
    assert caps.vector_index_types == ()
    with pytest.raises(CapabilityMissing, match=NO_KNN):
        caps.require(KNN)
    with pytest.raises(CapabilityMissing, match=NO_KNN):
        no_knn.vector_mapping(VectorSpec(dims=8))
    with pytest.raises(CapabilityMissing, match=NO_KNN):
        no_knn.knn_search(KnnSpec("v", [1.0, 0.0], k=1, num_candidates=1))
    # lexical: an index (with no index.knn setting, which this cluster would refuse), documents, searches
    name = "pytest-os-lexical"
    no_knn.delete_index(name, missing_ok=True)  # the node's data outlives a session
    no_knn.create_index(
        name,
        settings={"index": {"number_of_shards": 1}},
        mappings={"properties": {"t": {"type": "text", "analyzer": "english"}}},
    )
    assert not no_knn.bulk(ndjson([{"index": {"_index": name, "_id": "1"}}, {"t": "Running probes"}])).failed
    no_knn.refresh(name)
    (answer,) = no_knn.msearch(name, [{"query": {"match": {"t": "run"}}}])
    assert list(answer.ranking) == ["1"]  # the english analyzer stems "Running" to "run"


@pytest.fixture(scope="module")
def legacy(managed_nodes: ManagedNodes) -> Iterator[Backend]:
    """A real OpenSearch 2.19.1 (the bare integ-test zip: transport-netty4 only) on a Java it runs on."""
    try:
        java = find_java(flavour=LEGACY_OPENSEARCH)
    except JavaNotFoundError as exc:
        pytest.skip(f"OpenSearch 2.19.1 needs Java 11 to 21 and none is installed: {exc}")
    zip_path = fetch_artifact(LEGACY_OPENSEARCH.distribution)
    config = test_engine_config(
        name="pytest-os-2x",
        port=_free_port(),
        engine="opensearch",
        distribution=zip_path,
        java_home=java.home,
    )
    with _node(managed_nodes.node(config, flavour=LEGACY_OPENSEARCH)) as backend:
        yield backend


def test_a_2x_cluster_says_what_is_missing(legacy: Backend) -> None:
    assert legacy.info().version == "2.19.1"
    caps = legacy.probe()
    (note,) = [n for n in caps.notes if "2.x" in n]
    assert note == (
        "OpenSearch 2.19.1 is 2.x (the harness is tested on 3.5.0): this cluster lacks the k-NN plugin "
        "(opensearch-knn), the 'english' analyzer (analysis-common), search templates (lang-mustache)"
    )
    with pytest.raises(
        CapabilityMissing, match=rf"{NO_KNN} \(opensearch-knn\): vector and hybrid arms cannot run"
    ):
        legacy.vector_mapping(VectorSpec(dims=8))
    assert not caps.analyzers["english"] and caps.analyzers["standard"]
    # what it has still works: an index, documents and a BM25 search
    name = "pytest-os-2x-lexical"
    legacy.delete_index(name, missing_ok=True)  # the node's data outlives a session
    legacy.create_index(
        name, settings={"index": {"number_of_shards": 1}}, mappings={"properties": {"t": {"type": "text"}}}
    )
    assert not legacy.bulk(ndjson([{"index": {"_index": name, "_id": "1"}}, {"t": "old cluster"}])).failed
    legacy.refresh(name)
    assert legacy.count(name, {"match": {"t": "cluster"}}) == 1


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("os-cli") / "os-cli-subset", n_docs=60, n_test=5, n_train=3)


def _harness(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and everything printed (notes go to the console, errors to stderr), wrapping undone."""
    code = harness_main(argv)
    out = capfd.readouterr()
    return code, " ".join((out.out + " " + out.err).split())


def test_the_cli_on_a_cluster_without_knn(
    no_knn: Backend, small: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Vector and hybrid runs (and indexing with vectors) fail with the probe's reason before anything is
    created; lexical runs and --no-vectors indexing work."""
    drop_indices(no_knn, "r2med-os-cli-subset*")  # the node's data outlives a session
    url = ["--url", no_knn.url, "--no-progress"]
    for mode in ("vector", "hybrid"):
        code, err = _harness(
            ["run", mode, "--dataset", str(small), "--output", str(tmp_path / mode), *url], capfd
        )
        assert code != 0 and f"{NO_KNN} (opensearch-knn): vector and hybrid arms cannot run" in err, err
        assert "Traceback" not in err
    code, err = _harness(["index", "--dataset", str(small), *url], capfd)
    assert code != 0 and NO_KNN in err, err
    assert no_knn.list_indices("r2med-os-cli-subset*") == [], "nothing is created before the refusal"
    out = tmp_path / "lexical"
    code, err = _harness(
        ["run", "lexical", "--dataset", str(small), "--output", str(out), "--records", "jsonl", *url], capfd
    )
    assert code == 0, err
    (data,) = RunResults.load(out).datasets.values()
    assert list(data.arms) == ["lexical"] and data.arms["lexical"].metrics["ndcg@10"] > 0
    assert _harness(["index", "--dataset", str(small), "--no-vectors", *url], capfd)[0] == 0


def test_the_cli_on_a_2x_cluster(
    legacy: Backend, small: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A 2.x cluster: every run names what the cluster lacks; lexical runs on what it has."""
    url = ["--url", legacy.url, "--quiet", "--records", "jsonl"]
    out = tmp_path / "lexical"
    code, err = _harness(["run", "lexical", "--dataset", str(small), "--output", str(out), *url], capfd)
    assert code == 0, err
    assert "opensearch 2.19.1 lacks some features" in err  # one line on the first screen; each in the results
    notes = " ".join(RunResults.load(out).manifest.engine_notes())
    assert (
        "OpenSearch 2.19.1 is 2.x (the harness is tested on 3.5.0): this cluster lacks the k-NN plugin"
        in notes
    )
    assert RunResults.load(out).manifest.analysis in {"hunspell", "standard"}  # no english analyzer there
    code, err = _harness(
        ["run", "vector", "--dataset", str(small), "--output", str(tmp_path / "v"), *url], capfd
    )
    assert code != 0 and NO_KNN in err, err
    code, err = _harness(
        ["index", "--dataset", str(small), "--analysis", "english", "--no-vectors", *url[:3]], capfd
    )
    assert code != 0 and "cannot run the 'english' analysis chain: it lacks english" in err, err
