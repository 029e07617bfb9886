"""Query sets from a log: frequencies, the three samplers (seeded), and the ids the queries get."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime

import pytest

from base import ConfigError
from harness.judgments.clicks import QuerySetSpec, query_frequencies, query_ids, sample_queries
from harness.keys import table_of
from indexer import EventFilter, UbiEvent, UbiLog, UbiQuery

#: query "q{i}" is searched 2 ** (5 - i) times... for i in 0..5, then 20 rare queries searched once
FREQUENCIES = {f"q{i}": 2 ** (5 - i) for i in range(6)} | {f"rare{i:02d}": 1 for i in range(20)}


def _log() -> UbiLog:
    rows, n = [], 0
    for text, count in FREQUENCIES.items():
        for _ in range(count):
            rows.append(UbiQuery(f"s{n}", text, datetime(2025, 3, 1 + n % 5, tzinfo=UTC)))
            n += 1
    event = UbiEvent("click", "s-extra", datetime(2025, 3, 1, tzinfo=UTC), "d", 1, "from  an event")
    return UbiLog(tuple(rows), (event,))


def test_frequencies_count_searches_per_text() -> None:
    got = query_frequencies(_log())
    assert got == FREQUENCIES | {"from an event": 1}
    windowed = query_frequencies(_log(), EventFilter(start=date(2025, 3, 5)))
    assert sum(windowed.values()) == sum(1 for n in range(sum(FREQUENCIES.values())) if n % 5 == 4)


def test_top_takes_the_most_frequent() -> None:
    got = sample_queries(FREQUENCIES, QuerySetSpec("top", 3))
    assert [(q.qid, q.text, q.frequency) for q in got.queries] == [
        ("1", "q0", 32),
        ("2", "q1", 16),
        ("3", "q2", 8),
    ]
    assert got.distinct == 26 and got.searches == 83


def test_samplers_are_seeded_and_without_replacement() -> None:
    for method in ("random", "pps"):
        a = sample_queries(FREQUENCIES, QuerySetSpec(method, 10, seed=3))
        b = sample_queries(FREQUENCIES, QuerySetSpec(method, 10, seed=3))
        c = sample_queries(FREQUENCIES, QuerySetSpec(method, 10, seed=4))
        assert a == b and a != c and len({q.text for q in a.queries}) == 10
    everything = sample_queries(FREQUENCIES, QuerySetSpec("random", 100))
    assert len(everything.queries) == 26


def test_pps_favours_frequent_queries_and_random_does_not() -> None:
    picks: dict[str, Counter[str]] = {"pps": Counter(), "random": Counter()}
    for seed in range(300):
        for method, counter in picks.items():
            counter.update(q.text for q in sample_queries(FREQUENCIES, QuerySetSpec(method, 3, seed)).queries)
    # q0 holds 32 of 83 searches: pps picks it in most draws of 3; random in about 3 of 26
    assert picks["pps"]["q0"] > 220 and picks["pps"]["rare00"] < 30
    assert 10 < picks["random"]["q0"] < 60 and 10 < picks["random"]["rare00"] < 60


def test_ids_come_from_the_dataset_where_the_text_matches() -> None:
    assert query_ids({"b": 1, "a": 3, "c": 1}) == {"a": "1", "b": "2", "c": "3"}
    frequencies = {"okra sugar": 2, "new": 1}  # texts as query_frequencies gives them: whitespace collapsed
    ids = query_ids(frequencies, {"17": "okra   sugar"})
    assert ids == {"okra sugar": "17"}
    named = sample_queries(frequencies, QuerySetSpec("top", 2), ids)
    assert [(q.qid, q.text) for q in named.queries] == [("17", "okra sugar"), ("", "new")]


def test_bad_specs_and_empty_logs() -> None:
    with pytest.raises(
        ConfigError, match=r"sample\.method: expected one of random, pps, top, found 'stratified'"
    ):
        table_of(QuerySetSpec, {"method": "stratified"}, "sample")
    with pytest.raises(ConfigError, match=r"sample.size: expected 1\.\.1000000, found 0"):
        table_of(QuerySetSpec, {"method": "top", "size": 0}, "sample")
    with pytest.raises(ConfigError, match="found none"):
        sample_queries({}, QuerySetSpec())
