"""Fixtures for dataset tests: small valid folders (R2MED and BEIR layout) written to tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


def jsonl(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def r2med_files() -> dict[str, str | bytes]:
    """A valid R2MED-layout folder: 3 documents, 2 queries, 2 judgments, one expansion set."""
    return {
        "corpus.jsonl": jsonl(
            {"id": "d1", "text": "alpha helix"},
            {"id": "d2", "text": "beta sheet"},
            {"id": "d3", "text": "gamma"},
        ),
        "query.jsonl": jsonl({"id": "q1", "text": "what is alpha"}, {"id": "q2", "text": "what is beta"}),
        "qrels.jsonl": jsonl(
            {"q_id": "q1", "p_id": "d1", "score": 1}, {"q_id": "q2", "p_id": "d2", "score": 2}
        ),
        "hyde/m1/query_with_hydoc.jsonl": jsonl(
            {"id": "q1", "text": "what is alpha", "hy_doc": "alpha is a helix"},
            {"id": "q2", "text": "what is beta", "hy_doc": "beta is a sheet"},
        ),
    }


def beir_files() -> dict[str, str | bytes]:
    """A valid BEIR-layout folder with a test and a train split."""
    return {
        "corpus.jsonl": jsonl(
            {"_id": "d1", "title": "A", "text": "alpha helix"},
            {"_id": "d2", "title": "B", "text": "beta sheet"},
            {"_id": "d3", "title": "", "text": "gamma"},
        ),
        "queries.jsonl": jsonl({"_id": "q1", "text": "what is alpha"}, {"_id": "q2", "text": "what is beta"}),
        "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        "qrels/train.tsv": "query-id\tcorpus-id\tscore\nq2\td2\t1\nq2\td3\t2\n",
    }


def write(root: Path, files: dict[str, str | bytes | None]) -> Path:
    """Write ``files`` under ``root`` (a None value leaves that file out)."""
    for rel, content in files.items():
        if content is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


Files = dict[str, str | bytes | None]


@pytest.fixture
def make_r2med(tmp_path: Path) -> Callable[[Files], Path]:
    """Write the valid R2MED folder with ``overrides`` applied (None removes a file)."""

    def make(overrides: Files | None = None) -> Path:
        files: Files = {**r2med_files(), **(overrides or {})}
        return write(tmp_path / "r2med-case", files)

    return make


@pytest.fixture
def make_beir(tmp_path: Path) -> Callable[[Files], Path]:
    """Write the valid BEIR folder with ``overrides`` applied (None removes a file)."""

    def make(overrides: Files | None = None) -> Path:
        files: Files = {**beir_files(), **(overrides or {})}
        return write(tmp_path / "beir-case", files)

    return make
