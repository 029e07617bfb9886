"""Strategy bodies in each engine's dialect, and what the real engines make of them."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from base import CapabilityMissing, ConfigError, RequestFailed
from harness import RunError
from harness.experiment import experiment
from harness.strategies import (
    ARMS,
    MODES,
    EngineRRF,
    EngineSum,
    FusedArm,
    Lexical,
    QueryInput,
    SearchArm,
    SearchContext,
    Vector,
)
from indexer import RRF_RETRIEVER, Backend, ConnectionSettings, FusionParams, VectorSpec
from indexer.backends import backend_class
from tests._support import ndjson


def test_registry_names_every_arm_and_what_it_needs() -> None:
    assert set(ARMS) == {
        "lexical", "vector", "hybrid", "hybrid-engine-sum",
        "hybrid-engine-rrf", "hybrid-engine-linear", "hybrid-engine-query",
    }  # fmt: skip
    assert {name for name in MODES["hybrid"]} == set(ARMS)
    assert not ARMS["lexical"].needs_capability and isinstance(ARMS["hybrid"], FusedArm)
    vector, rrf, summed = ARMS["vector"], ARMS["hybrid-engine-rrf"], ARMS["hybrid-engine-sum"]
    assert isinstance(vector, SearchArm) and vector.needs_vector
    assert (
        isinstance(rrf, SearchArm) and rrf.needs_capability == RRF_RETRIEVER and rrf.compare_to == ("hybrid",)
    )
    assert (
        isinstance(summed, SearchArm)
        and summed.needs_weights
        and summed.needs_capability == "approximate_knn"
    )


def test_lexical_fields_and_bm25_variants() -> None:
    q = QueryInput("q1", "fever after aspirin")
    combined = Lexical(SearchContext(depth=50)).body(q)
    assert combined["query"] == {"match": {"title_text": {"query": "fever after aspirin"}}}
    assert combined["size"] == 50 and combined["_source"] is False
    r2med = Lexical(SearchContext(bm25="r2med", lexical_field="multi_match")).body(q)
    assert r2med["query"]["multi_match"]["fields"] == ["title.r2med", "text.r2med"]
    with pytest.raises(ConfigError, match=r"index.bm25='x': expected one of es, r2med, found 'x'"):
        experiment(values={"mode": "lexical", "index.bm25": "x"})


def test_vector_body_is_the_engines_dialect(backend: Backend) -> None:
    ctx = SearchContext(depth=100, vector_field="vec_m", dialect=backend)
    body = Vector(ctx).body(QueryInput("q", "t", (0.6, 0.8)))
    if backend.product == "elasticsearch":  # a top-level knn section, num_candidates 10 x k
        assert body["knn"] == {"field": "vec_m", "query_vector": [0.6, 0.8], "k": 100, "num_candidates": 1000}
    else:  # a knn query clause, num_candidates as ef_search
        assert body["query"]["knn"]["vec_m"] == {
            "vector": [0.6, 0.8],
            "k": 100,
            "method_parameters": {"ef_search": 1000},
        }
    with pytest.raises(RunError, match="needs a query vector"):
        Vector(ctx).body(QueryInput("q", "t"))
    with pytest.raises(RunError, match="needs the engine's query dialect"):
        Vector(SearchContext(vector_field="vec_m")).body(QueryInput("q", "t", (1.0, 0.0)))


def test_engine_sum_body_on_each_engine(backend: Backend) -> None:
    ctx = SearchContext(depth=10, vector_field="vec_m", dialect=backend, sum_weights=(0.25, 0.75))
    body = EngineSum(ctx).body(QueryInput("q", "fever", (1.0, 0.0)))
    match = {"match": {"title_text": {"query": "fever"}}}
    if backend.product == "elasticsearch":
        assert body["query"] == {"bool": {"must": [match], "boost": 0.25}} and body["knn"]["boost"] == 0.75
    else:  # BM25 rescaled by 1 + k1 (2.2 for the es parameters): the same sum as Elasticsearch's
        lexical, knn = body["query"]["bool"]["should"]
        assert lexical == {"bool": {"must": [match], "boost": pytest.approx(0.25 * 2.2)}}
        assert knn["knn"]["vec_m"]["boost"] == 0.75
    with pytest.raises(RunError, match="needs its weights"):
        EngineSum(SearchContext(vector_field="vec_m", dialect=backend)).body(QueryInput("q", "t", (1.0, 0.0)))


def test_engine_rrf_body_shape() -> None:
    """Elasticsearch's rrf retriever body, written by its backend (no request is sent to build it)."""
    build = backend_class("elasticsearch").FUSIONS["rrf"]
    ctx = SearchContext(depth=100, vector_field="vec_m")
    knn = Vector(ctx).knn(QueryInput("q", "t", (1.0, 0.0)))
    rrf = build(Lexical(ctx).query("t"), knn, FusionParams(window=100))["retriever"]["rrf"]
    assert rrf["rank_constant"] == 60 and rrf["rank_window_size"] == 100
    assert [next(iter(r)) for r in rrf["retrievers"]] == ["standard", "knn"]


@pytest.fixture()
def vec_index(backend: Backend) -> Iterator[str]:
    name = "pytest-strategies-vec"
    backend.delete_index(name, missing_ok=True)
    vector = backend.vector_mapping(VectorSpec(dims=2))
    backend.create_index(
        name, settings={}, mappings={"properties": {"title_text": {"type": "text"}, "vec_m": vector}}
    )
    yield name
    backend.delete_index(name, missing_ok=True)


def test_engine_rrf_matches_the_probe(backend: Backend, vec_index: str) -> None:
    """Where the probe says rrf is missing, the engine really rejects the body (and accepts it otherwise);
    the backend refuses to write it for a cluster without it."""
    caps = backend.probe()
    ctx = SearchContext(depth=10, vector_field="vec_m", dialect=backend)
    query = QueryInput("q", "t", (1.0, 0.0))
    if not caps.has(RRF_RETRIEVER):
        with pytest.raises(CapabilityMissing, match="rrf"):
            EngineRRF(ctx).body(query)
    if backend.product == "elasticsearch":
        raw = backend_class("elasticsearch").FUSIONS["rrf"](
            Lexical(ctx).query("t"), Vector(ctx).knn(query), FusionParams(10)
        )
        try:
            backend.search(vec_index, raw)
            accepted = True
        except RequestFailed:
            accepted = False
        assert accepted is caps.has(RRF_RETRIEVER)


def test_long_hyde_text_does_not_hit_clause_limits(backend: Backend) -> None:
    """A generated document of thousands of distinct words still searches (no max_clause_count failure)."""
    name = "test-strategies-long-query"
    backend.delete_index(name, missing_ok=True)
    backend.create_index(name, settings={}, mappings={"properties": {"title_text": {"type": "text"}}})
    try:
        lines = [{"index": {"_index": name, "_id": "d1"}}, {"title_text": "word17 word99 fever"}]
        assert not backend.bulk(ndjson(lines)).failed
        backend.refresh(name)
        rng = random.Random(7)
        text = " ".join(f"word{rng.randrange(20000)}" for _ in range(6000))
        body = Lexical(SearchContext(depth=10)).body(QueryInput("q", text + " fever"))
        assert [h.id for h in backend.search(name, body).hits] == ["d1"]
    finally:
        backend.delete_index(name, missing_ok=True)


def test_offline_dialect_needs_no_cluster() -> None:
    """Building Elasticsearch bodies sends nothing: the backend object alone writes them."""
    offline = backend_class("elasticsearch")(ConnectionSettings(url="http://127.0.0.1:9"))
    body = Vector(SearchContext(depth=10, vector_field="v", dialect=offline)).body(
        QueryInput("q", "t", (1.0,))
    )
    assert body["knn"]["k"] == 10
