from __future__ import annotations

from elasticsearch import Elasticsearch

from indexer import probe


def test_probe_reports_real_capabilities(es_client: Elasticsearch) -> None:
    caps = probe(es_client)
    assert caps.major == 9
    assert caps.flavour == "elasticsearch"
    assert caps.analyzers["standard"] is True
    # the answer for `english` must match what the engine really does
    try:
        es_client.indices.analyze(analyzer="english", text="running")
        english = True
    except Exception:
        english = False
    assert caps.analyzers["english"] is english
    assert set(caps.retrievers) == {"rrf", "linear"}
    assert "hnsw" in caps.vector_index_types
    assert caps.license in {"basic", "trial", "platinum", "enterprise", "gold", "unknown"}
    if not caps.retrievers["rrf"]:
        assert any("rrf" in n for n in caps.notes)


def test_probe_creates_nothing(es_client: Elasticsearch) -> None:
    before = set(es_client.indices.get(index="*", expand_wildcards="all").body)
    probe(es_client)
    after = set(es_client.indices.get(index="*", expand_wildcards="all").body)
    assert before == after
