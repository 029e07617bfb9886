"""The capability probe on both engines: what it says matches what the engine really does."""

from __future__ import annotations

import pytest

from base import MappingConflictError, RequestFailed
from indexer import Backend

PREFIX = "pytest-probe-"


def _accepts_analyzer(backend: Backend, analyzer: str) -> bool:
    """Whether the engine takes a text field with ``analyzer`` (asked with a real index, not the probe)."""
    name = f"{PREFIX}{analyzer}"
    backend.delete_index(name, missing_ok=True)
    try:
        backend.create_index(
            name, settings={}, mappings={"properties": {"t": {"type": "text", "analyzer": analyzer}}}
        )
    except (MappingConflictError, RequestFailed):  # "analyzer [english] has not been configured"
        return False
    backend.delete_index(name)
    return True


def test_probe_reports_real_capabilities(backend: Backend) -> None:
    caps = backend.probe()
    assert caps.flavour == backend.product
    assert caps.major == (9 if backend.product == "elasticsearch" else 3)
    assert caps.analyzers["standard"] is True
    # the answer for `english` must match what the engine really does
    assert caps.analyzers["english"] is _accepts_analyzer(backend, "english")
    assert set(caps.retrievers) == {"rrf", "linear"}
    assert "hnsw" in caps.vector_index_types
    if backend.product == "elasticsearch":
        assert caps.license in {"basic", "trial", "platinum", "enterprise", "gold", "unknown"}
        if not caps.retrievers["rrf"]:
            assert any("rrf" in n for n in caps.notes)
    else:
        assert caps.features["knn"] and not caps.features["rrf_retriever"]
        assert "Elasticsearch's" in caps.missing["rrf_retriever"]


@pytest.mark.parametrize("feature", ["rrf_retriever", "linear_retriever"])
def test_retriever_features_follow_the_retrievers(backend: Backend, feature: str) -> None:
    caps = backend.probe()
    assert caps.has(feature) is caps.has_retriever(feature.removesuffix("_retriever"))
    assert caps.has(feature) or feature in caps.missing
