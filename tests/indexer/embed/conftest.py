"""Shared fixtures for the embedding tests: small SciFact subsets and the bundled model spec."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import Encoder, ModelSpec, document_text

SCIFACT = Path(__file__).resolve().parents[3].parent / "shared" / "datasets" / "scifact"


def load_scifact_docs(n: int) -> list[tuple[str, str]]:
    """The first ``n`` SciFact documents as ``(id, title + text)``."""
    corpus = SCIFACT / "corpus.jsonl"
    if not corpus.is_file():
        pytest.skip(f"SciFact corpus not found at {corpus}")
    with corpus.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in islice(handle, n)]
    return [(row["_id"], document_text(row.get("title"), row.get("text"))) for row in rows]


#: how many abstracts the embedding tests encode: enough for two windows of 16 and one batch of 32, and each
#: encoding of them costs ~2.5 s of CPU (the fast loop encodes them about ten times: keep it small)
N_DOCS = 32


@pytest.fixture(scope="session")
def scifact_docs() -> list[tuple[str, str]]:
    """32 real SciFact abstracts."""
    return load_scifact_docs(N_DOCS)


@pytest.fixture(scope="session")
def reference_vectors(minilm: ModelSpec, scifact_docs: list[tuple[str, str]]) -> np.ndarray:
    """The abstracts encoded once (one length-sorted batch of 32), for tests to compare against."""
    return Encoder(minilm, device="cpu").encode_documents([text for _, text in scifact_docs])
