"""The run's identity (its config hash) comes from the keys' declarations: every key says what it affects, and
the hash covers the keys that affect results, the judgments sources' keys included; a key that is not
classified cannot be declared."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pytest

from harness.experiment import (
    ALL_TABLES,
    ARRAY_TABLES,
    Experiment,
    JudgmentsTable,
    experiment,
    identity,
    key_values,
)
from harness.judgments.sources import SOURCES
from harness.keys import AFFECTS, OUTPUT, PERFORMANCE, RESULTS, key

#: fields of the key tables that are not keys (each says why)
NOT_KEYS = {
    (JudgmentsTable, "spec"),  # the source built from its keys
}


def _tables() -> list[type]:
    sources = [table for kind in SOURCES.values() for table in kind.tables]
    return [*ALL_TABLES.values(), *ARRAY_TABLES.values(), *sources]


@pytest.mark.parametrize("table", _tables(), ids=lambda t: t.__name__)
def test_every_key_of_every_table_says_what_it_affects(table: type) -> None:
    unclassified = [
        f.name
        for f in dataclasses.fields(table)
        if (table, f.name) not in NOT_KEYS and f.metadata.get("affects") not in AFFECTS
    ]
    assert unclassified == [], f"{table.__name__}: declare with key(..., affects=RESULTS|PERFORMANCE|OUTPUT)"


def test_the_experiments_own_keys_say_it_too() -> None:
    own = [f for f in dataclasses.fields(Experiment) if "doc" in f.metadata]
    assert own and all(f.metadata["affects"] in AFFECTS for f in own)


def test_a_key_cannot_be_declared_without_saying_what_it_affects() -> None:
    with pytest.raises(TypeError):
        key(3, doc="no class")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="expected one of results, performance, output, found 'speed'"):
        key(3, affects="speed")


def _hash(exp: Experiment) -> str:
    return hashlib.sha256(json.dumps(identity(exp), sort_keys=True).encode()).hexdigest()


#: another valid value of a key, to change it by
OTHER: dict[str, Any] = {
    "search.depth": 50,
    "search.batch_size": 7,
    "search.concurrency": 2,
    "stats.alpha": 0.01,
    "stats.measures": ["ndcg@10", "recall@100"],
    "index.bm25": "r2med",
    "index.hnsw_m": 32,
    "index.workers": 4,
    "embedding.model": "e5",
    "embedding.url": "http://127.0.0.1:1/v1",
    "load.clients": 3,
    "ann.candidates": [10, 20],
    "output.wide": True,
    "output.records": "jsonl",
    "connection.request_timeout": 5.0,
}


@pytest.mark.parametrize("name", sorted(OTHER))
def test_the_hash_changes_with_a_results_key_and_only_with_one(name: str) -> None:
    base = {"mode": "hybrid", "data.datasets": ["sample"]}
    before, after = experiment(values=base), experiment(values={**base, name: OTHER[name]})
    affects = dict((k, a) for k, a, _ in key_values(before))[name]
    assert (_hash(before) != _hash(after)) is (affects == RESULTS), (name, affects)
    assert affects in (RESULTS, PERFORMANCE, OUTPUT)


def test_a_sources_keys_are_in_the_hash_by_their_class() -> None:
    base = {"mode": "hybrid", "judgments.source": "judge", "judgments.llm": "m"}
    plain = _hash(experiment(values=base))
    assert _hash(experiment(values={**base, "judgments.temperature": 0.5})) != plain  # results
    assert _hash(experiment(values={**base, "judgments.concurrency": 2})) == plain  # performance
    ident = identity(experiment(values=base))
    assert ident["judgments.llm"] == ["m"] and "judgments.concurrency" not in ident
