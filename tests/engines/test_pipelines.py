"""OpenSearch search pipelines on a real 3.5.0 node (core OpenSearch: no neural-search needed), faiss asked of a
node without its native libraries, and the hybrid query's pipelines as the harness writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main as harness_main
from indexer import Backend
from indexer.backends._os_hybrid import harness_pipeline, normalizes, unnormalized
from indexer.backends._types import FusionParams
from tests._support import drop_indices, scifact_subset

PIPELINE = "pytest-truncate-3"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("pipelines") / "pipeline-slice", n_docs=60, n_test=5, n_train=0
    )


def _run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = harness_main(argv)
    out = capfd.readouterr()
    return code, " ".join((out.out + " " + out.err).split())


def test_a_named_pipeline_shapes_the_arm_and_a_missing_one_is_one_sentence(
    os_backend: Backend, small: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    os_backend.put_search_pipeline(PIPELINE, {"response_processors": [{"truncate_hits": {"target_size": 3}}]})
    base = [
        "run",
        "lexical",
        "--dataset",
        str(small),
        "--url",
        os_backend.url,
        "--quiet",
        "--records",
        "jsonl",
    ]
    code, said = _run(
        [*base, "--output", str(tmp_path / "piped"), "--set", f"search.pipelines=lexical={PIPELINE}"], capfd
    )
    assert code == 0, said
    lines = (tmp_path / "piped" / "runs").rglob("lexical.trec")
    per_query: dict[str, int] = {}
    for path in lines:
        for line in path.read_text().splitlines():
            qid = line.split()[0]
            per_query[qid] = per_query.get(qid, 0) + 1
    assert per_query and max(per_query.values()) == 3, "the pipeline's truncate_hits ran on every search"
    code, said = _run(
        [*base, "--output", str(tmp_path / "nope"), "--set", "search.pipelines=lexical=no-such-pipe"], capfd
    )
    assert code != 0
    assert f"{os_backend.url} has no search pipeline 'no-such-pipe': expected one of [" in said
    assert f"{PIPELINE}" in said and "create it (PUT /_search/pipeline/no-such-pipe)" in said


def test_faiss_asked_of_a_node_without_it(
    os_backend: Backend, small: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    drop_indices(os_backend, "r2med-pipeline-slice*")
    code, said = _run(
        ["index", "--dataset", str(small), "--url", os_backend.url, "--knn-engine", "faiss"], capfd
    )
    assert code != 0
    assert (
        f"{os_backend.url} cannot build a knn_vector field on the faiss engine: expected the cluster to have it"
        in said
    )
    assert "knn_faiss: false" in said and "use engine lucene" in said
    assert os_backend.list_indices("r2med-pipeline-slice*") == [], "refused before anything is created"


def test_the_hybrid_query_pipelines_the_harness_writes() -> None:
    """What can be checked without neural-search (not served by Maven Central): the pipeline bodies, and the
    detection of a raw answer (neural-search #1011's delimiters), here on the scores such an answer carries."""
    minmax = harness_pipeline(FusionParams(window=10, weights=(1.0, 3.0)))
    assert minmax == {
        "phase_results_processors": [
            {
                "normalization-processor": {
                    "normalization": {"technique": "min_max"},
                    "combination": {"technique": "arithmetic_mean", "parameters": {"weights": [0.25, 0.75]}},
                }
            }
        ]
    }
    for technique in ("l2", "z_score"):
        body = harness_pipeline(FusionParams(window=10, technique=technique))
        assert body["phase_results_processors"][0]["normalization-processor"]["normalization"] == {
            "technique": technique
        }
    rrf = harness_pipeline(FusionParams(window=10, technique="rrf", rank_constant=40))
    assert rrf == {
        "phase_results_processors": [
            {"score-ranker-processor": {"combination": {"technique": "rrf", "rank_constant": 40}}}
        ]
    }
    assert all(normalizes(harness_pipeline(FusionParams(window=5, technique=t))) for t in ("min_max", "rrf"))
    assert not normalizes({"response_processors": [{"truncate_hits": {"target_size": 3}}]})
    raw = [-9549512000.0, -4422440400.0, 12.5, 11.0, -4422440400.0, 0.93, 0.91, -9549512000.0]
    assert unnormalized(raw) and not unnormalized([0.98, 0.5, 0.0, None])
