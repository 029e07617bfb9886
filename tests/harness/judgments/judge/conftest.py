"""Helpers for the judge's tests: stand-in judges behind the OpenAI-compatible test server.

The stand-ins (tests/_openai_server.py) answer from the human labels they are given, by rules of
their own; they never read the texts. They measure the harness's judging machinery (prompts,
parsing, counting, combining, agreement), not any LLM's quality.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.results import JudgeProvenance, load_provenance
from indexer import load_dataset, read_judgments
from tests._openai_server import OpenAIServer
from tests.harness.conftest import GATE_DATASET

ARMS = "lexical,vector,hybrid"


def truth_of(data: Path) -> dict[tuple[str, str], int]:
    """The human grade of every judged pair of a dataset folder: what the stand-ins answer from."""
    qrels = load_dataset(str(data)).qrels
    return {(q, d): g for q, docs in qrels.items() for d, g in docs.items()}


@pytest.fixture()
def standins(server: OpenAIServer, gate_data: Path) -> OpenAIServer:
    server.state.judge_labels = truth_of(gate_data)
    return server


def run_judge(
    capsys: pytest.CaptureFixture[str], server: OpenAIServer, cache: Path, out: Path, *args: str
) -> tuple[int, str]:
    argv = [
        "judge",
        *args,
        "--llm-url",
        server.url,
        "--cache-dir",
        str(cache),
        "--output",
        str(out),
        "--quiet",
    ]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def answers(out: Path, dataset: str = GATE_DATASET) -> list[dict[str, Any]]:
    lines = (out / dataset / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def qrels_file(out: Path, dataset: str = GATE_DATASET) -> Path:
    return out / dataset / "judgments.qrels"


def provenance(out: Path, dataset: str = GATE_DATASET) -> JudgeProvenance:
    path = qrels_file(out, dataset)
    found = load_provenance(path, read_judgments(path).sha256)
    assert found is not None
    return found
