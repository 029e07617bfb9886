"""Our per-query nDCG@10 and ERR@10 against the engine's own ``_rank_eval`` on the same searches.

Where a real engine ships the rank-eval module (the probe's ``rank_eval`` feature), the engine
ranks SciFact claims over a SciFact subset and scores them; our :func:`evaluate` scores the
rankings the engine returned. Elasticsearch's (and OpenSearch's) DCG gain is ``2^grade - 1``
where ours is linear (trec_eval's): on binary grades they agree as they stand; on graded ones,
giving ours the grades ``2^g - 1`` makes the gains equal, so what is compared is the measure's
computation (discounts, cutoff, ideal ranking, unrated documents). An engine without the module
(the stripped Elasticsearch build here) skips, saying so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from harness.eval import evaluate
from indexer import Backend
from indexer.backends import RANK_EVAL, RatedRequest
from tests._support import ndjson, scifact_subset

INDEX = "r2med-test-rank-eval"
K = 10


@dataclass(frozen=True)
class Rated:
    backend: Backend
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _jsonl(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _qrels(folder: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


@pytest.fixture(scope="module")
def rated(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Rated:
    caps = backend.probe()
    if not caps.has(RANK_EVAL):
        pytest.skip(f"{backend.product} {caps.version}: {caps.missing[RANK_EVAL]}")
    folder = scifact_subset(tmp_path_factory.mktemp("rank-eval") / "s", n_docs=300, n_test=40, n_train=0)
    docs = _jsonl(folder / "corpus.jsonl")
    backend.delete_index(INDEX, missing_ok=True)
    backend.create_index(
        INDEX,
        settings={"number_of_shards": 1, "number_of_replicas": 0},
        mappings={"properties": {"title": {"type": "text"}, "text": {"type": "text"}}},
    )
    payload = ndjson(
        line
        for d in docs
        for line in ({"index": {"_index": INDEX, "_id": d["_id"]}}, {"title": d["title"], "text": d["text"]})
    )
    assert not backend.bulk(payload, timeout_s=120).failed
    backend.refresh(INDEX)
    queries = {q["_id"]: q["text"] for q in _jsonl(folder / "queries.jsonl")}
    return Rated(backend, queries, _qrels(folder))


def _requests(rated: Rated, qrels: dict[str, dict[str, int]]) -> list[RatedRequest]:
    return [
        RatedRequest(
            qid, {"multi_match": {"query": rated.queries[qid], "fields": ["title", "text"]}}, qrels[qid]
        )
        for qid in sorted(qrels)
    ]


def _graded(qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """SciFact's judgments with seeded grades 1..3, and a few grade-0 ones."""
    rng = np.random.default_rng(11)
    return {q: {d: int(rng.integers(0, 4)) for d in sorted(docs)} for q, docs in qrels.items()}


def _run(hits: dict[str, tuple[str, ...]]) -> dict[str, dict[str, float]]:
    """The engine's rankings, as it returned them (strictly decreasing scores: no tie to break)."""
    return {q: {d: float(len(ids) - i) for i, d in enumerate(ids)} for q, ids in hits.items()}


@pytest.mark.parametrize("grades", ["binary", "graded"])
def test_our_ndcg_matches_rank_eval_per_query(rated: Rated, grades: str) -> None:
    qrels = rated.qrels if grades == "binary" else _graded(rated.qrels)
    engine = rated.backend.rank_eval(INDEX, _requests(rated, qrels), {"dcg": {"k": K, "normalize": True}})
    assert not engine.failures and set(engine.per_query) == set(qrels)
    gains = {q: {d: 2**g - 1 for d, g in docs.items()} for q, docs in qrels.items()}
    ours = evaluate(gains, _run(engine.hits), [f"nDCG@{K}"])
    scores = ours.scores(f"nDCG@{K}")
    assert {q: round(scores[q], 9) for q in qrels} == {q: round(v, 9) for q, v in engine.per_query.items()}
    assert 0.1 < engine.metric_score < 0.95  # BM25 finds some, not all: the comparison is not vacuous
    assert sum(0.0 < v < 1.0 for v in engine.per_query.values()) >= 5


def test_our_err_matches_rank_eval_per_query(rated: Rated) -> None:
    qrels = _graded(rated.qrels)
    metric = {"expected_reciprocal_rank": {"k": K, "maximum_relevance": 3}}
    engine = rated.backend.rank_eval(INDEX, _requests(rated, qrels), metric)
    assert not engine.failures
    ours = evaluate(qrels, _run(engine.hits), [f"ERR@{K}"], max_grade=3).scores(f"ERR@{K}")
    assert {q: round(ours[q], 9) for q in qrels} == {q: round(v, 9) for q, v in engine.per_query.items()}
    assert sum(v > 0 for v in engine.per_query.values()) >= 5
