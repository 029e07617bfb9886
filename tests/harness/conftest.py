"""Real run directories shared by the gate, pool and re-score tests (made once per session, on demand).

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
