"""Fixtures for generation tests: small cuts of the real SciFact data (the OpenAI-compatible test
server, ``server``, comes from tests/conftest.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests._support import scifact_subset

N_QUERIES = 15


@pytest.fixture(scope="session")
def expand_subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SciFact cut to 120 documents and 15 judged test queries (BEIR layout), never written to."""
    return scifact_subset(
        tmp_path_factory.mktemp("expand") / "pristine", n_docs=120, n_test=N_QUERIES, n_train=5
    )


@pytest.fixture()
def dataset_copy(expand_subset: Path, tmp_path: Path) -> Path:
    """A writable copy named after the test (its index alias is r2med-llm-<name>)."""
    dest = tmp_path / "llm-expand"
    shutil.copytree(expand_subset, dest)
    return dest
