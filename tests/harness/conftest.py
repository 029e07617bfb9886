"""Real run directories shared by the gate, pool, re-score and judge tests (made once per session, on demand).

Both runs search the same 40-query SciFact cut (300 documents) on the session's real Elasticsearch:

* ``base_run``: ``harness run hybrid`` as shipped (the baseline of the gate tests);
* ``degraded_run``: the same, with a query prompt that talks about cake and football. The prompt
  only reaches the query embeddings, so the vector arm gets clearly worse on many queries (a large,
  significant drop), the hybrid arm a little worse (lexical holds it up: a drop that is not
  significant), and the lexical arm does not change at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from indexer import load_dataset
from tests._openai_server import OpenAIServer
from tests._support import scifact_subset

GATE_DATASET = "gate-subset"
BAD_PROMPT = (
    "Recipe for chocolate cake with sugar, eggs and flour; football scores and the weather tomorrow: "
)


@pytest.fixture(scope="session")
def gate_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("gate-data") / GATE_DATASET, n_docs=300, n_test=40, n_train=0
    )


def _run(es_url: str, data: Path, out: Path, *extra: str) -> Path:
    args = ["run", "hybrid", "--dataset", str(data), "--output", str(out), "--url", es_url]
    assert main([*args, "--records", "jsonl", "--no-progress", *extra]) == 0
    return out


@pytest.fixture(scope="session")
def base_run(es_url: str, gate_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(es_url, gate_data, tmp_path_factory.mktemp("gate-runs") / "base")


@pytest.fixture(scope="session")
def degraded_run(es_url: str, gate_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(
        es_url, gate_data, tmp_path_factory.mktemp("gate-runs") / "degraded", "--query-prompt", BAD_PROMPT
    )


@pytest.fixture(scope="session")
def judged(
    llm_server: OpenAIServer, base_run: Path, gate_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Labels of stand-in judges (tests/_openai_server.py: rules, not an LLM) for ``base_run``'s pooled top 10
    of lexical, vector and hybrid: ``measured`` (flip:0.1 on every pooled pair, so its agreement with the
    dataset's judgments is measured) and ``unmeasured`` (only the pairs people did not judge: never measured).
    Each value is the judgments.qrels file (its provenance beside it)."""
    qrels = load_dataset(str(gate_data)).qrels
    state = llm_server.state
    state.judge_labels = {(q, d): g for q, docs in qrels.items() for d, g in docs.items()}
    out = tmp_path_factory.mktemp("judged")
    runs = {"measured": (), "unmeasured": ("--unjudged-only",)}
    try:
        for name, extra in runs.items():
            argv = ["judge", str(base_run), "--arms", "lexical,vector,hybrid", "--llm", "flip:0.1", *extra]
            argv += [
                "--llm-url",
                llm_server.url,
                "--cache-dir",
                str(out / "cache"),
                "-o",
                str(out / name),
                "-q",
            ]
            assert main(argv) == 0
    finally:
        state.judge_labels = None
    return {name: out / name / GATE_DATASET / "judgments.qrels" for name in runs}
