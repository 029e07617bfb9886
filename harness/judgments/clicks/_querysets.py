"""Query sets from a UBI log: which of its queries to judge or to run, sampled three ways (seeded).

A query's frequency is the number of searches (distinct ``query_id``) with that text, in the date
window when one is given. Methods (:data:`SAMPLERS`):

* ``random``: a uniform sample without replacement;
* ``pps``: probability proportional to frequency, without replacement (Efraimidis and Spirakis'
  weighted sampling: each query keeps ``u ** (1 / frequency)`` for a uniform ``u``, the largest win);
* ``top``: the most frequent (ties: by text).

Queries get ids from a dataset's queries where their texts match, else numbers ``1..N`` in order of
frequency (ties by text): the same log gives the same ids in every command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from base import ConfigError
from harness.keys import RESULTS, between, key
from indexer import EventFilter, UbiLog, normalise_text

SAMPLE_METHODS = ("random", "pps", "top")


@dataclass(frozen=True, slots=True)
class QuerySetSpec:
    """How a query set is sampled from a UBI log (the ``sample.*`` keys of ``harness clicks queries``)."""

    method: str = key(
        "pps", affects=RESULTS, choices=lambda: SAMPLE_METHODS, doc="random | pps (by frequency) | top"
    )
    size: int = key(50, affects=RESULTS, check=between(1, 1_000_000), doc="queries to sample")
    seed: int = key(42, affects=RESULTS, doc="random seed")


@dataclass(frozen=True, slots=True)
class SampledQuery:
    qid: str
    text: str
    frequency: int


@dataclass(frozen=True, slots=True)
class QuerySet:
    spec: QuerySetSpec
    queries: tuple[SampledQuery, ...]
    distinct: int
    searches: int


def query_frequencies(log: UbiLog, keep: EventFilter | None = None) -> dict[str, int]:
    """Searches per query text (whitespace collapsed), from the searches and the events' ``user_query``.

    A ``query_id`` whose events carry several texts (a user refining the query) counts once for each of
    its texts, so that every text the click model judges has a count (and an id)."""
    window = keep or EventFilter()
    texts: dict[str, set[str]] = {}
    for q in log.queries:
        if window.in_window(q.timestamp):
            texts.setdefault(q.query_id, set()).add(normalise_text(q.user_query))
    for e in log.events:
        if e.query_id and e.user_query and window.in_window(e.timestamp):
            texts.setdefault(e.query_id, set()).add(normalise_text(e.user_query))
    counts: dict[str, int] = {}
    for keys in texts.values():
        for text in keys:
            counts[text] = counts.get(text, 0) + 1
    return counts


def _order(frequencies: Mapping[str, int]) -> list[str]:
    return sorted(frequencies, key=lambda t: (-frequencies[t], t))


def query_ids(
    frequencies: Mapping[str, int], dataset_queries: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Text -> query id: the dataset's id where the text is one of its queries, else a number by frequency."""
    if dataset_queries is not None:
        by_text = {normalise_text(text): qid for qid, text in dataset_queries.items()}
        return {t: by_text[t] for t in frequencies if t in by_text}
    return {text: str(i) for i, text in enumerate(_order(frequencies), 1)}


def _random(texts: list[str], weights: np.ndarray, size: int, rng: np.random.Generator) -> list[str]:
    return [texts[i] for i in sorted(rng.choice(len(texts), size=size, replace=False))]


def _pps(texts: list[str], weights: np.ndarray, size: int, rng: np.random.Generator) -> list[str]:
    keys = rng.random(len(texts)) ** (1.0 / weights)
    return [texts[i] for i in sorted(np.argsort(-keys, kind="stable")[:size])]


def _top(texts: list[str], weights: np.ndarray, size: int, rng: np.random.Generator) -> list[str]:
    return texts[:size]


Sampler = Callable[[list[str], np.ndarray, int, np.random.Generator], list[str]]
SAMPLERS: Mapping[str, Sampler] = {"random": _random, "pps": _pps, "top": _top}


def sample_queries(
    frequencies: Mapping[str, int], spec: QuerySetSpec, ids: Mapping[str, str] | None = None
) -> QuerySet:
    """``spec.size`` queries of the log (all of them when it has fewer), in order of frequency."""
    texts = _order(frequencies)
    if not texts:
        raise ConfigError("expected queries in the UBI log to sample from, found none")
    named = ids if ids is not None else query_ids(frequencies)
    weights = np.array([frequencies[t] for t in texts], dtype=np.float64)
    chosen = SAMPLERS[spec.method](
        texts, weights, min(spec.size, len(texts)), np.random.default_rng(spec.seed)
    )
    picked = [
        SampledQuery(named.get(t, ""), t, frequencies[t]) for t in _order({t: frequencies[t] for t in chosen})
    ]
    return QuerySet(spec, tuple(picked), len(texts), sum(frequencies.values()))
