"""Fixtures for harness.eval: real SciFact qrels and seeded synthetic runs over them."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
SCIFACT_QRELS = REPO.parent / "shared" / "datasets" / "scifact" / "qrels"


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return qrels


def synthetic_run(
    qrels: dict[str, dict[str, int]],
    seed: int,
    depth: int = 100,
    skill: float = 0.0,
    hit_rate: float = 0.7,
    n_docs: int = 5000,
) -> dict[str, dict[str, float]]:
    """Random tie-free scores over distractors plus some judged docs; ``skill`` lifts relevant docs."""
    rng = np.random.default_rng(seed)
    run: dict[str, dict[str, float]] = {}
    for qid in sorted(qrels):
        docs = {f"d{i}" for i in rng.choice(n_docs, size=depth, replace=False)}
        for doc_id in sorted(qrels[qid]):
            if rng.random() < hit_rate:
                docs.add(doc_id)
        scores = rng.random(len(docs))
        run[qid] = {}
        for doc_id, score in zip(sorted(docs), scores, strict=True):
            bonus = skill * qrels[qid].get(doc_id, 0)
            run[qid][doc_id] = float(score + bonus)
    return run


@pytest.fixture(scope="session")
def scifact_test_qrels() -> dict[str, dict[str, int]]:
    return load_qrels(SCIFACT_QRELS / "test.tsv")


@pytest.fixture(scope="session")
def scifact_train_qrels() -> dict[str, dict[str, int]]:
    return load_qrels(SCIFACT_QRELS / "train.tsv")


@pytest.fixture(scope="session")
def graded_qrels(scifact_test_qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """SciFact test qrels with grades 1..3 and extra grade-0 judgments (SciFact itself is binary)."""
    rng = np.random.default_rng(7)
    out: dict[str, dict[str, int]] = {}
    for qid in sorted(scifact_test_qrels):
        out[qid] = {doc_id: int(rng.integers(1, 4)) for doc_id in sorted(scifact_test_qrels[qid])}
        for i in rng.choice(5000, size=3, replace=False):
            out[qid][f"d{i}"] = 0
    return out
