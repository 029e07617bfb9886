"""What an existing index already holds: each document's id and the vector fields it has."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

from indexer.backends import Backend
from indexer.data import Dataset


def existing_docs(backend: Backend, index: str, vector_fields: Sequence[str]) -> dict[str, set[str]]:
    """id -> the vector fields that document already has (search_after over the id field)."""
    backend.refresh(index)
    present: dict[str, set[str]] = {}

    def scan(query: dict[str, Any]) -> Iterator[str]:
        after: tuple[Any, ...] | None = None
        while True:
            body: dict[str, Any] = {
                "query": query,
                "sort": [{"id": "asc"}],
                "size": 5000,
                "_source": False,
                "track_total_hits": False,
            }
            if after:
                body["search_after"] = list(after)
            hits = backend.search(index, body).hits
            if not hits:
                return
            for hit in hits:
                yield hit.id
            after = hits[-1].sort

    for doc_id in scan({"match_all": {}}):
        present[doc_id] = set()
    for vf in vector_fields:
        for doc_id in scan({"exists": {"field": vf}}):
            present.setdefault(doc_id, set()).add(vf)
    return present


def existing_by_ids(
    backend: Backend, index: str, dataset: Dataset, vector_fields: Sequence[str], window: int = 1000
) -> dict[str, set[str]]:
    """id -> the vector fields that document already has, asked by ``_id`` (any mapping)."""
    backend.refresh(index)
    present: dict[str, set[str]] = {}
    ids_iter = (d.id for d in dataset.iter_corpus())
    while chunk := list(islice(ids_iter, window)):
        ids = {"ids": {"values": chunk}}
        for f in (None, *vector_fields):
            query = ids if f is None else {"bool": {"filter": [ids, {"exists": {"field": f}}]}}
            body = {"query": query, "size": len(chunk), "_source": False, "track_total_hits": False}
            for hit in backend.search(index, body).hits:
                have = present.setdefault(hit.id, set())
                if f is not None:
                    have.add(f)
    return present
