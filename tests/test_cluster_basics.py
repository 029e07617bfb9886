"""Index creation, bulk, search and health against the real engine."""

from __future__ import annotations

from elasticsearch import Elasticsearch, helpers


def test_create_bulk_search_knn(es_client: Elasticsearch) -> None:
    name = "test-basics-knn"
    es_client.indices.delete(index=name, ignore_unavailable=True)
    es_client.indices.create(
        index=name,
        mappings={
            "properties": {
                "text": {"type": "text"},
                "vec": {"type": "dense_vector", "dims": 3, "similarity": "cosine", "index": True},
            }
        },
    )
    try:
        docs = [
            {"_index": name, "_id": "a", "text": "aspirin reduces fever", "vec": [1, 0, 0]},
            {"_index": name, "_id": "b", "text": "statins lower cholesterol", "vec": [0, 1, 0]},
        ]
        ok, errors = helpers.bulk(es_client, docs, refresh=True)
        assert ok == 2 and not errors
        hits = es_client.search(index=name, query={"match": {"text": "fever"}})["hits"]["hits"]
        assert [h["_id"] for h in hits] == ["a"]
        knn = es_client.search(
            index=name, knn={"field": "vec", "query_vector": [0, 0.9, 0.1], "k": 1, "num_candidates": 10}
        )
        assert knn["hits"]["hits"][0]["_id"] == "b"
        assert es_client.cluster.health(index=name)["status"] in {"green", "yellow"}
    finally:
        es_client.indices.delete(index=name, ignore_unavailable=True)
