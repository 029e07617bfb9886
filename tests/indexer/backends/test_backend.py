"""Every Backend method against both real engines (the ``backend`` fixture is parametrized by engine)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from base import EngineUnavailable, MappingConflictError, NotFound, RequestFailed
from indexer import Backend, ConnectionSettings, VectorSpec, connect
from indexer.backends import KNN, KnnSpec
from tests._support import drop_indices, ndjson

PREFIX = "pytest-backend-"
SETTINGS = {"index": {"number_of_shards": 1, "number_of_replicas": 0}}


@pytest.fixture()
def clean(backend: Backend) -> Iterator[Backend]:
    drop_indices(backend, f"{PREFIX}*")
    yield backend
    drop_indices(backend, f"{PREFIX}*")


def _load(backend: Backend, index: str, docs: dict[str, dict[str, Any]]) -> None:
    payload = ndjson(
        line for doc_id, src in docs.items() for line in ({"index": {"_index": index, "_id": doc_id}}, src)
    )
    result = backend.bulk(payload)
    assert not result.failed, result.failed
    backend.refresh(index)


def test_info_health_and_probe(backend: Backend) -> None:
    info = backend.info()
    assert info.product == backend.product
    assert info.version_tuple >= ((9, 0) if backend.product == "elasticsearch" else (3, 0))
    health = backend.health(wait_for_status="yellow", timeout_s=10)
    assert health.status in {"green", "yellow"} and health.nodes == 1 and not health.timed_out
    caps = backend.probe()
    assert caps.flavour == backend.product and caps.version == info.version
    assert caps.has(KNN) and "hnsw" in caps.vector_index_types
    assert caps.analyzers["standard"] and caps.analyzers["hunspell_en_US"]
    if backend.product == "opensearch":  # the 3.x integ-test zip has analysis-common and lang-mustache
        assert caps.analyzers["english"] and caps.has("search_template")
        assert "opensearch-knn" in caps.modules
        assert any("no security plugin" in n for n in caps.notes)
        assert not caps.has("hybrid_query")
        assert "neural-search" in caps.missing["hybrid_query"]


def test_probe_creates_nothing(backend: Backend) -> None:
    before = {s.name for s in backend.list_indices("*")}
    fresh = connect(ConnectionSettings(url=backend.url))
    try:
        fresh.probe()
    finally:
        fresh.close()
    assert {s.name for s in backend.list_indices("*")} == before


def test_index_lifecycle(clean: Backend) -> None:
    backend, name = clean, f"{PREFIX}life"
    assert not backend.index_exists(name)
    backend.create_index(
        name, settings=SETTINGS, mappings={"dynamic": "strict", "properties": {"t": {"type": "text"}}}
    )
    assert backend.index_exists(name)
    backend.put_mapping(name, properties={"k": {"type": "keyword"}}, meta={"harness": "pytest", "n": 1})
    mapping = backend.get_mapping(name)
    assert (
        mapping.index == name
        and set(mapping.properties) == {"t", "k"}
        and mapping.meta == {"harness": "pytest", "n": 1}
    )
    backend.put_settings(name, {"index": {"refresh_interval": "-1"}})
    backend.put_settings(name, {"index": {"refresh_interval": "1s"}})
    assert backend.delete_index(name)
    assert not backend.delete_index(name, missing_ok=True)
    with pytest.raises(NotFound, match=rf"HTTP 404 while deleting index {name}: index_not_found_exception"):
        backend.delete_index(name)
    with pytest.raises(NotFound):
        backend.get_mapping(name)


def test_bulk_count_search_msearch_round_trip(clean: Backend) -> None:
    backend, name = clean, f"{PREFIX}docs"
    backend.create_index(
        name,
        settings=SETTINGS,
        mappings={"dynamic": "strict", "properties": {"t": {"type": "text"}, "n": {"type": "integer"}}},
    )
    payload = ndjson(
        [
            {"index": {"_index": name, "_id": "a"}},
            {"t": "red apples and green pears", "n": 1},
            {"index": {"_index": name, "_id": "b"}},
            {"t": "green tea", "n": 2},
            {"index": {"_index": name, "_id": "bad"}},
            {"t": "strict mapping refuses this", "unknown": 1},
            {"update": {"_index": name, "_id": "a"}},
            {"doc": {"n": 10}},
        ]
    )
    result = backend.bulk(payload, timeout_s=30)
    assert [(i.op, i.doc_id, i.ok) for i in result.items] == [
        ("index", "a", True),
        ("index", "b", True),
        ("index", "bad", False),
        ("update", "a", True),
    ]
    (bad,) = result.failed
    assert (
        bad.status == 400
        and bad.error_type == "strict_dynamic_mapping_exception"
        and "unknown" in (bad.reason or "")
    )
    backend.refresh(name)
    assert backend.count(name) == 2
    assert backend.count(name, {"range": {"n": {"gte": 5}}}) == 1

    page = backend.search(name, {"query": {"match_all": {}}, "sort": [{"n": "asc"}], "size": 1})
    assert (
        [h.id for h in page.hits] == ["b"]
        and page.hits[0].sort == (2,)
        and page.hits[0].source == {"t": "green tea", "n": 2}
    )

    answers = backend.msearch(
        name,
        [
            {"query": {"match": {"t": "green"}}, "size": 10},
            {"query": {"match": {"t": "nothing-matches-this"}}, "size": 10},
            {"query": {"term": {"n": "not-a-number"}}, "size": 10},  # fails in the shard: an item error
            {"query": {"match": {"t": "apples"}}, "size": 10},
        ],
        timeout_s=30,
    )
    assert len(answers) == 4
    assert set(answers[0].ranking) == {"a", "b"} and answers[0].error is None
    assert answers[1].ranking == {} and answers[1].error is None
    assert answers[2].error is not None and answers[2].status == 400 and answers[2].hits == ()
    assert list(answers[3].ranking) == ["a"]
    assert backend.get_sources(name, ["a", "missing"], ["t"]) == {"a": {"t": "red apples and green pears"}}


def test_a_search_that_loses_shards_is_an_error_not_a_partial_ranking(clean: Backend) -> None:
    """Both engines answer 200 with the hits of the shards that worked unless told not to: a run would
    score a ranking over part of the index as if it were whole (seen with a node cut off mid-run)."""
    numbers, words = f"{PREFIX}numbers", f"{PREFIX}words"
    backend = clean
    for name, kind in ((numbers, "integer"), (words, "keyword")):
        backend.create_index(name, settings=SETTINGS, mappings={"properties": {"n": {"type": kind}}})
    _load(backend, numbers, {"1": {"n": 1}})
    _load(backend, words, {"w": {"n": "seven"}})
    both = f"{numbers},{words}"
    query = {"query": {"term": {"n": "seven"}}, "size": 10}  # fails on the integer index's shard only
    with pytest.raises(RequestFailed, match="HTTP 400"):
        backend.search(both, query)
    (answer,) = backend.msearch(both, [query], timeout_s=30)
    assert answer.error is not None and answer.hits == (), answer
    whole = backend.msearch(both, [{"query": {"match_all": {}}, "size": 10}], timeout_s=30)
    assert set(whole[0].ranking) == {"1", "w"} and whole[0].error is None


def test_an_index_whose_primary_cannot_start_is_refused_with_the_clusters_reason(clean: Backend) -> None:
    """As on a node over its high disk watermark (the compose stack on a full disk): the primary stays
    unassigned, so every bulk request would wait and retry with 0 documents indexed. The allocation filter
    stands in for the disk: it makes the same unassigned primary on any machine."""
    index = f"{PREFIX}unplaceable"
    settings = {"index": {**SETTINGS["index"], "routing.allocation.require._name": "no-such-node"}}
    with pytest.raises(RequestFailed) as err:
        clean.create_index(index, settings=settings, mappings={}, wait_s=2)
    said = str(err.value)
    assert said.startswith(f"{clean.display} created index {index} but could not start its primary shard"), (
        said
    )
    assert "within 2 s" in said and "The index was deleted again" in said
    assert "no-such-node" in said or "filter" in said, said  # the decider's own words
    assert not clean.index_exists(index)
    clean.create_index(
        index, settings=SETTINGS, mappings={}, wait_s=2
    )  # a placeable one is created as before
    assert clean.index_exists(index)


def test_aliases_move_atomically(clean: Backend) -> None:
    backend, alias = clean, f"{PREFIX}alias"
    old, new = f"{PREFIX}v1", f"{PREFIX}v2"
    for name in (old, new):
        backend.create_index(name, settings=SETTINGS, mappings={"properties": {"t": {"type": "text"}}})
    _load(backend, old, {"1": {"t": "old"}})
    _load(backend, new, {"1": {"t": "new"}, "2": {"t": "new"}})
    assert backend.alias_targets(alias) == []
    backend.point_alias(alias, old)
    assert backend.alias_targets(alias) == [old] and backend.count(alias) == 1
    backend.point_alias(alias, new)
    assert backend.alias_targets(alias) == [new] and backend.count(alias) == 2
    backend.point_alias(alias, new)  # idempotent
    assert backend.alias_targets(alias) == [new]
    assert backend.get_mapping(alias).index == new
    listed = {s.name: s for s in backend.list_indices(f"{PREFIX}*")}
    assert listed[new].aliases == (alias,) and listed[old].aliases == ()
    assert listed[new].docs == 2 and listed[new].size_bytes > 0 and listed[new].health in {"green", "yellow"}


def test_mapping_conflicts_are_named_and_change_nothing(clean: Backend) -> None:
    backend, name = clean, f"{PREFIX}conflict"
    vector = backend.vector_mapping(VectorSpec(dims=3))
    backend.create_index(
        name, settings=SETTINGS, mappings={"properties": {"title": {"type": "text"}, "emb": vector}}
    )
    wider = backend.vector_mapping(VectorSpec(dims=4))
    with pytest.raises(
        MappingConflictError, match=rf"mapping conflict on index {name}, field emb: .*nothing was changed"
    ):
        backend.put_mapping(name, properties={"extra": {"type": "keyword"}, "emb": wider})
    assert "extra" not in backend.get_mapping(name).properties  # the request was refused as a whole
    with pytest.raises(MappingConflictError, match=r"field title: "):
        backend.put_mapping(name, properties={"title": {"type": "keyword"}})
    before = backend.get_mapping(name).properties
    assert (
        before["title"] == {"type": "text"} and before["emb"] == backend.get_mapping(name).properties["emb"]
    )


def test_index_template_applies_to_new_indices(clean: Backend) -> None:
    backend = clean
    template: dict[str, Any] = json.loads(
        resources.files("harness").joinpath("resources/templates/harness-eval.json").read_text("utf-8")
    )
    body = {
        **template,
        "index_patterns": [f"{PREFIX}eval-*"],
        "template": {**template["template"], "aliases": {f"{PREFIX}evals": {}}},
    }
    name = "pytest-backend-template"
    backend.put_index_template(name, body)
    try:
        index = f"{PREFIX}eval-1"
        result = backend.bulk(
            ndjson(
                [{"index": {"_index": index, "_id": "r1"}}, {"run_id": "x", "dataset": "d", "arm": "lexical"}]
            )
        )
        assert not result.failed
        rejected = backend.bulk(ndjson([{"index": {"_index": index, "_id": "r2"}}, {"not_in_template": 1}]))
        assert rejected.failed[0].error_type == "strict_dynamic_mapping_exception"
        mapping = backend.get_mapping(f"{PREFIX}evals")
        assert mapping.index == index and mapping.properties["run_id"] == {"type": "keyword"}
    finally:
        assert backend.delete_index_template(name)
    assert not backend.delete_index_template(name, missing_ok=True)


def test_vector_mapping_and_knn_dialect(clean: Backend) -> None:
    backend, name = clean, f"{PREFIX}knn"
    field = backend.vector_mapping(VectorSpec(dims=2, m=8, ef_construction=50))
    if backend.product == "elasticsearch":
        assert field["type"] == "dense_vector" and field["index_options"] == {
            "type": "hnsw",
            "m": 8,
            "ef_construction": 50,
        }
    else:
        assert field["type"] == "knn_vector" and field["method"]["engine"] == "lucene"
        assert field["method"]["parameters"] == {"m": 8, "ef_construction": 50}
    backend.create_index(name, settings=SETTINGS, mappings={"properties": {"v": field}})
    _load(backend, name, {"x": {"v": [1.0, 0.0]}, "y": {"v": [0.0, 1.0]}, "xy": {"v": [0.6, 0.8]}})
    knn = KnnSpec("v", [1.0, 0.0], k=2, num_candidates=10)
    body = backend.knn_search(knn)
    assert ("knn" in body) is (backend.product == "elasticsearch")  # top-level knn vs a knn query clause
    (answer,) = backend.msearch(name, [{**body, "size": 2}])
    assert answer.ranking == pytest.approx({"x": 1.0, "xy": 0.8})  # (1 + cos) / 2 on both engines


def test_unreachable_cluster_is_retryable() -> None:
    with pytest.raises(
        EngineUnavailable, match=r"cannot reach a search engine at http://127.0.0.1:1\b"
    ) as err:
        connect(ConnectionSettings(url="http://127.0.0.1:1"))
    assert err.value.retryable


def test_request_errors_carry_status(clean: Backend) -> None:
    with pytest.raises(RequestFailed) as err:
        clean.search(f"{PREFIX}missing-index", {"query": {"match_all": {}}})
    assert err.value.status == 404 and not err.value.retryable
    assert "index_not_found_exception" in str(err.value)
