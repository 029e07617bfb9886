"""Two managed nodes form one cluster on loopback; losing one keeps every ranking identical.

A 300-odd-document SciFact subset is indexed with 2 shards and 1 replica, so
each node holds a full copy. 20 SciFact test queries are run (BM25 over title
and text) before and after one node is stopped. The stopped node is the
elected master, taken out of the voting configuration first (the documented
way to remove a master-eligible node from a two-node cluster without losing
quorum), so the survivor must both take over as master and promote replicas
to primaries.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import pytest
from elasticsearch import Elasticsearch, helpers

from indexer import ManagedNode
from tests._nodes import ManagedNodes
from tests._support import SCIFACT, raw_es_client, test_engine_config
from tests.reliability._nodes import HEAP, free_port

INDEX = "test-reliability-multinode"
CLUSTER = "r2med-pytest-multinode"
NAMES = ("pytest-mn-a", "pytest-mn-b")
N_DOCS = 300
N_QUERIES = 20
DEPTH = 50

Ranking = list[tuple[str, float]]


@dataclass
class Cluster:
    nodes: dict[str, ManagedNode]
    clients: dict[str, Elasticsearch]
    start_s: float


def _subset(folder: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The first N_QUERIES test queries, their judged documents, topped up with the corpus head to N_DOCS."""
    qids: list[str] = []
    judged: set[str] = set()
    with (folder / "qrels" / "test.tsv").open() as fh:
        next(fh)
        for line in fh:
            qid, docid, _score = line.rstrip("\n").split("\t")
            if qid not in qids:
                if len(qids) == N_QUERIES:
                    break
                qids.append(qid)
            judged.add(docid)
    queries: dict[str, str] = {}
    with (folder / "queries.jsonl").open() as fh:
        for line in fh:
            q = json.loads(line)
            if q["_id"] in qids:
                queries[q["_id"]] = q["text"]
    judged_docs: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    with (folder / "corpus.jsonl").open() as fh:
        for line in fh:
            d = json.loads(line)
            doc = {"_id": d["_id"], "title": d["title"], "text": d["text"]}
            (judged_docs if d["_id"] in judged else others).append(doc)
    docs = judged_docs + others[: N_DOCS - len(judged_docs)]
    assert len(queries) == N_QUERIES and len(docs) == N_DOCS and {d["_id"] for d in docs} >= judged
    return docs, queries


@pytest.fixture(scope="module")
def cluster(managed_nodes: ManagedNodes) -> Iterator[Cluster]:
    began = time.monotonic()
    http = {name: free_port() for name in NAMES}
    transport = {name: free_port() for name in NAMES}
    shared = {
        "cluster.name": CLUSTER,
        "discovery.type": None,  # the engine's single-node default must go
        "discovery.seed_hosts": [f"127.0.0.1:{transport[n]}" for n in NAMES],
        "cluster.initial_master_nodes": list(NAMES),
    }
    nodes = {
        name: managed_nodes.node(
            replace(
                test_engine_config(name, http[name], transport_port=transport[name], settings=shared),
                heap=HEAP,
            ),
            fresh=True,
        )
        for name in NAMES
    }
    try:
        # both at once: neither is healthy until the other has joined (both are needed to bootstrap)
        with ThreadPoolExecutor(len(nodes)) as pool:
            for future in [pool.submit(node.start) for node in nodes.values()]:
                future.result()
        clients = {n: raw_es_client(node.config.url) for n, node in nodes.items()}
        health = clients[NAMES[0]].cluster.health(wait_for_nodes="2", timeout="60s")
        assert health["number_of_nodes"] == 2, health
        yield Cluster(nodes, clients, time.monotonic() - began)
    finally:
        for node in nodes.values():
            with contextlib.suppress(Exception):
                node.stop()


def _search(client: Elasticsearch, queries: dict[str, str], **params: Any) -> dict[str, Ranking]:
    runs: dict[str, Ranking] = {}
    for qid, text in queries.items():
        hits = client.search(
            index=INDEX,
            query={"multi_match": {"query": text, "fields": ["title", "text"]}},
            size=DEPTH,
            source=False,
            **params,
        )["hits"]["hits"]
        runs[qid] = [(h["_id"], h["_score"]) for h in hits]
    return runs


def _master(client: Elasticsearch) -> str:
    rows = cast(list[dict[str, str]], client.cat.master(format="json").body)
    return rows[0]["node"]


def _ids(runs: dict[str, Ranking]) -> dict[str, list[str]]:
    return {qid: [docid for docid, _ in ranking] for qid, ranking in runs.items()}


def test_two_nodes_lose_one_and_rankings_stay_identical(cluster: Cluster) -> None:
    docs, queries = _subset(SCIFACT)
    a = cluster.clients[NAMES[0]]
    a.indices.create(
        index=INDEX,
        settings={"number_of_shards": 2, "number_of_replicas": 1},
        mappings={"properties": {"title": {"type": "text"}, "text": {"type": "text"}}},
    )
    ok, errors = helpers.bulk(a, ({"_index": INDEX, **d} for d in docs), refresh="wait_for")
    assert (ok, errors) == (len(docs), [])
    health = a.cluster.health(index=INDEX, wait_for_status="green", timeout="60s")
    assert health["status"] == "green" and health["active_shards"] == 4, health
    shards = cast(list[dict[str, str]], a.cat.shards(index=INDEX, format="json", h="shard,prirep,node").body)
    assert sorted((s["shard"], s["prirep"]) for s in shards) == [
        ("0", "p"),
        ("0", "r"),
        ("1", "p"),
        ("1", "r"),
    ]
    for name in NAMES:  # every node holds one copy of every shard: a full copy each
        assert sorted(s["shard"] for s in shards if s["node"] == name) == ["0", "1"], shards

    # before: the whole cluster, and each node's own copies alone
    before = {
        mode: _search(a, queries, search_type=mode) for mode in ("query_then_fetch", "dfs_query_then_fetch")
    }
    per_node = {name: _search(a, queries, preference=f"_only_nodes:{name}") for name in NAMES}
    assert all(len(r) > 0 for r in before["query_then_fetch"].values())
    assert per_node[NAMES[0]] == per_node[NAMES[1]]  # primary and replica copies score identically
    assert before["query_then_fetch"] == per_node[NAMES[0]]

    # stop the elected master, after taking it out of the voting configuration
    master = _master(a)
    survivor = next(n for n in NAMES if n != master)
    client = cluster.clients[survivor]
    client.cluster.post_voting_config_exclusions(node_names=master, timeout="60s")
    stopped_at = time.monotonic()
    assert cluster.nodes[master].stop()
    health = client.cluster.health(index=INDEX, wait_for_status="yellow", wait_for_nodes="1", timeout="60s")
    recovery_s = time.monotonic() - stopped_at
    assert health["number_of_nodes"] == 1 and health["active_primary_shards"] == 2, health
    assert health["unassigned_shards"] == 2 and health["status"] == "yellow", health
    assert _master(client) == survivor
    assert client.count(index=INDEX)["count"] == len(docs)

    after = {mode: _search(client, queries, search_type=mode) for mode in before}
    for mode in before:
        assert _ids(after[mode]) == _ids(before[mode]), mode  # ids and order
        assert after[mode] == before[mode], mode  # and the very same scores
    client.cluster.delete_voting_config_exclusions(wait_for_removal=False)
    qtf, dfs = before["query_then_fetch"], before["dfs_query_then_fetch"]
    ties = sum(x[1] == y[1] for r in qtf.values() for x, y in itertools.pairwise(r))
    differing = sum(qtf[q] != dfs[q] for q in qtf)
    print(
        f"\nmultinode: cluster of 2 up in {cluster.start_s:.1f}s; {len(docs)} docs, 2 shards x 1 replica; "
        f"{len(queries)} queries x top {DEPTH}; stopped master {master}, yellow after {recovery_s:.1f}s; "
        f"rankings and scores identical before/after in both search types; per-node copies identical; "
        f"{ties} adjacent score ties; query_then_fetch vs dfs differ on {differing}/{len(qtf)} queries"
    )
