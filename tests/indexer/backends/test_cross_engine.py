"""The same corpus, mapping and queries on Elasticsearch and OpenSearch: the same answers.

The corpus is real SciFact (a deterministic subset: 300 abstracts, 40 judged test claims),
the text side is the harness's own layout (``indexer/resources``) with an analysis chain both
engines have, and every document carries a seeded random unit vector. Both engines run Lucene
BM25 and Lucene HNSW, so rankings must agree; where the scores differ by a known factor, the
factor is checked too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from indexer import BM25_PARAMS, Backend, VectorSpec
from indexer._layout import text_side
from indexer.backends import KnnSpec
from tests._support import ndjson, scifact_subset

DIMS = 16
ANALYSES = ("hunspell", "standard")  # chains both engines offer (the stripped ES has no `english`)
K1_ES = BM25_PARAMS["es"][0]


@pytest.fixture(scope="module")
def corpus(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], np.ndarray]:
    folder = scifact_subset(tmp_path_factory.mktemp("cross") / "scifact", n_docs=300, n_test=40, n_train=0)
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    vectors = np.random.default_rng(7).normal(size=(len(docs), DIMS))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return docs, queries, vectors


def _build(backend: Backend, name: str, analysis: str, corpus: Any) -> None:
    docs, _, vectors = corpus
    body = text_side(analysis)
    body["mappings"]["properties"]["vec"] = backend.vector_mapping(VectorSpec(dims=DIMS))
    backend.delete_index(name, missing_ok=True)
    backend.create_index(name, settings=body["settings"], mappings=body["mappings"])
    lines = []
    for doc, vec in zip(docs, vectors, strict=True):
        lines += [
            {"index": {"_index": name, "_id": doc["_id"]}},
            {"id": doc["_id"], "title": doc["title"], "text": doc["text"], "vec": vec.tolist()},
        ]
    assert not backend.bulk(ndjson(lines), timeout_s=120).failed
    backend.refresh(name)
    assert backend.count(name) == len(docs)


@pytest.fixture(scope="module", params=ANALYSES)
def pair(
    request: pytest.FixtureRequest, es_backend: Backend, os_backend: Backend, corpus: Any
) -> Iterator[tuple[Backend, Backend, str]]:
    name = f"pytest-cross-{request.param.replace('_', '-')}"
    for backend in (es_backend, os_backend):
        _build(backend, name, request.param, corpus)
    yield es_backend, os_backend, name
    for backend in (es_backend, os_backend):
        backend.delete_index(name, missing_ok=True)


def _top(ranking: dict[str, float], n: int, scale: float = 1.0) -> list[tuple[str, float]]:
    """The first ``n`` (id, score/scale), ties broken by id, leaving out a tie group cut by position n."""
    ordered = sorted(((d, s / scale) for d, s in ranking.items()), key=lambda p: (-round(p[1], 4), p[0]))
    if len(ordered) > n and round(ordered[n][1], 4) == round(ordered[n - 1][1], 4):
        cut = round(ordered[n - 1][1], 4)
        return [p for p in ordered[:n] if round(p[1], 4) != cut]
    return ordered[:n]


@pytest.mark.parametrize("bm25", ["es", "r2med"])
def test_bm25_rankings_agree(pair: tuple[Backend, Backend, str], corpus: Any, bm25: str) -> None:
    es, os_, name = pair
    _, queries, _ = corpus
    suffix = "" if bm25 == "es" else ".r2med"
    k1 = BM25_PARAMS[bm25][0]
    bodies = [
        {"query": {"match": {f"title_text{suffix}": {"query": q["text"]}}}, "size": 20} for q in queries
    ]
    es_answers, os_answers = es.msearch(name, bodies), os_.msearch(name, bodies)
    identical = 0
    for q, a, b in zip(queries, es_answers, os_answers, strict=True):
        assert a.error is None and b.error is None
        # Elasticsearch keeps BM25's (k1 + 1) factor, OpenSearch (Lucene) does not: same ranking, scaled scores
        es_top, os_top = _top(a.ranking, 10, scale=1.0 + k1), _top(b.ranking, 10)
        assert [d for d, _ in es_top] == [d for d, _ in os_top], q["_id"]
        assert [s for _, s in es_top] == pytest.approx([s for _, s in os_top], rel=1e-5), q["_id"]
        identical += [d for d, _ in _top(a.ranking, 10)] == [d for d, _ in _top(b.ranking, 10)]
    assert identical == len(queries)


def test_knn_agrees_with_exact_search_on_both(pair: tuple[Backend, Backend, str], corpus: Any) -> None:
    es, os_, name = pair
    docs, _, vectors = corpus
    ids = [d["_id"] for d in docs]
    rng = np.random.default_rng(11)
    queries = rng.normal(size=(20, DIMS))
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    specs = [KnnSpec("vec", q.tolist(), k=10, num_candidates=100) for q in queries]
    es_answers = es.msearch(name, [{**es.knn_search(s), "size": 10} for s in specs])
    os_answers = os_.msearch(name, [{**os_.knn_search(s), "size": 10} for s in specs])
    for q, a, b in zip(queries, es_answers, os_answers, strict=True):
        dots = vectors @ q
        exact = {ids[i]: (1.0 + float(dots[i])) / 2.0 for i in np.argsort(-dots)[:10]}
        # 300 vectors, 100 candidates: HNSW finds the exact neighbours on both engines, with the same scores
        assert a.ranking == pytest.approx(exact, rel=1e-5)
        assert b.ranking == pytest.approx(exact, rel=1e-5)


def test_in_engine_weighted_sum_means_the_same_on_both(
    pair: tuple[Backend, Backend, str], corpus: Any
) -> None:
    es, os_, name = pair
    _, queries, vectors = corpus
    w_lex, w_vec = 0.3, 2.0
    for q, vec in zip(queries[:10], vectors[::-1][:10], strict=False):
        lexical = {"match": {"title_text": {"query": q["text"]}}}
        knn = KnnSpec("vec", vec.tolist(), k=10, num_candidates=100)
        bodies = {
            b.product: [
                {
                    **b.weighted_sum(lexical, knn, lexical_weight=w_lex, vector_weight=w_vec, bm25_k1=K1_ES),
                    "size": 300,
                },
                {"query": lexical, "size": 300},
                {**b.knn_search(knn), "size": 10},
            ]
            for b in (es, os_)
        }
        (es_sum, es_lex, es_vec), (os_sum, _, _) = (
            es.msearch(name, bodies["elasticsearch"]),
            os_.msearch(name, bodies["opensearch"]),
        )
        # Elasticsearch: the sum is w_lex * BM25 + w_vec * kNN score, per document (0 where an arm misses it)
        expected = {
            d: w_lex * es_lex.ranking.get(d, 0.0) + w_vec * es_vec.ranking.get(d, 0.0)
            for d in set(es_lex.ranking) | set(es_vec.ranking)
        }
        assert es_sum.ranking == pytest.approx(expected, rel=1e-4)
        # OpenSearch, with bm25_k1: the very same sums
        assert os_sum.ranking == pytest.approx(es_sum.ranking, rel=1e-4)
