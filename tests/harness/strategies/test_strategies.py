"""Strategy bodies, and what the real engine makes of them."""

from __future__ import annotations

import random

import pytest
from elasticsearch import Elasticsearch

from harness import RunError
from harness.run import RunConfig
from harness.strategies import (
    ARMS,
    MODES,
    EngineRRF,
    FusedArm,
    Lexical,
    QueryInput,
    SearchArm,
    SearchContext,
    Vector,
)
from indexer import ConfigError, probe


def test_registry_names_every_arm_and_what_it_needs() -> None:
    assert set(ARMS) == {"lexical", "vector", "hybrid", "hybrid-engine-rrf", "hybrid-engine-linear"}
    assert {name for name in MODES["hybrid"]} == set(ARMS)
    assert not ARMS["lexical"].needs_capability and isinstance(ARMS["hybrid"], FusedArm)
    vector, rrf = ARMS["vector"], ARMS["hybrid-engine-rrf"]
    assert isinstance(vector, SearchArm) and vector.needs_vector
    assert isinstance(rrf, SearchArm) and rrf.needs_capability == "rrf" and rrf.compare_to == ("hybrid",)


def test_lexical_fields_and_bm25_variants() -> None:
    q = QueryInput("q1", "fever after aspirin")
    combined = Lexical(SearchContext(depth=50)).body(q)
    assert combined["query"] == {"match": {"title_text": {"query": "fever after aspirin"}}}
    assert combined["size"] == 50 and combined["_source"] is False
    r2med = Lexical(SearchContext(bm25="r2med", lexical_field="multi_match")).body(q)
    assert r2med["query"]["multi_match"]["fields"] == ["title.r2med", "text.r2med"]
    with pytest.raises(ConfigError, match=r"expected --bm25 in \['es', 'r2med'\], found 'x'"):
        RunConfig(mode="lexical", bm25="x")


def test_vector_candidates_default_to_ten_times_k() -> None:
    body = Vector(SearchContext(depth=100, vector_field="vec_m")).body(QueryInput("q", "t", (0.6, 0.8)))
    assert body["knn"] == {"field": "vec_m", "query_vector": [0.6, 0.8], "k": 100, "num_candidates": 1000}
    with pytest.raises(RunError, match="needs a query vector"):
        Vector(SearchContext(vector_field="vec_m")).body(QueryInput("q", "t"))


def test_engine_rrf_body_shape() -> None:
    body = EngineRRF(SearchContext(depth=100, vector_field="vec_m")).body(QueryInput("q", "t", (1.0, 0.0)))
    rrf = body["retriever"]["rrf"]
    assert rrf["rank_constant"] == 60 and rrf["rank_window_size"] == 100
    assert [next(iter(r)) for r in rrf["retrievers"]] == ["standard", "knn"]


def test_engine_rrf_matches_the_probe(es_client: Elasticsearch) -> None:
    """Where the probe says rrf is missing, the engine really rejects our body (and accepts it otherwise)."""
    caps = probe(es_client)
    body = EngineRRF(SearchContext(depth=10, vector_field="vec_m")).body(QueryInput("q", "t", (1.0, 0.0)))
    try:
        es_client.search(index="r2med-no-such-index*", allow_no_indices=True, **body)
        accepted = True
    except Exception:
        accepted = False
    assert accepted is caps.has_retriever("rrf")


def test_long_hyde_text_does_not_hit_clause_limits(es_client: Elasticsearch) -> None:
    """A generated document of thousands of distinct words still searches (no max_clause_count failure)."""
    name = "test-strategies-long-query"
    es_client.indices.delete(index=name, ignore_unavailable=True)
    es_client.indices.create(index=name, mappings={"properties": {"title_text": {"type": "text"}}})
    try:
        es_client.index(index=name, id="d1", document={"title_text": "word17 word99 fever"}, refresh=True)
        rng = random.Random(7)
        text = " ".join(f"word{rng.randrange(20000)}" for _ in range(6000))
        body = Lexical(SearchContext(depth=10)).body(QueryInput("q", text + " fever"))
        hits = es_client.search(index=name, **body)["hits"]["hits"]
        assert [h["_id"] for h in hits] == ["d1"]
    finally:
        es_client.indices.delete(index=name, ignore_unavailable=True)
