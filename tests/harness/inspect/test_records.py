"""Evaluation records built from a synthetic but realistic dataset (3 arms, 12 queries)."""

from __future__ import annotations

import pytest

from harness import RunError
from harness.eval import rank
from harness.inspect import TOP_HITS, RecordContext, build_records
from harness.results import EvalRecord, record_id
from tests.harness.inspect.synthetic import ARMS, N_QUERIES, TIMESTAMP, make_dataset, records_for

TOP_LEVEL = {
    "@timestamp", "run_id", "dataset", "arm", "fusion", "model", "query", "metrics", "first_relevant_rank",
    "relevant", "retrieved_count", "missed", "top_hits", "attribution", "arms_ndcg_at_10", "delta",
    "comparison", "batch_ms",
}  # fmt: skip


@pytest.fixture(scope="module")
def dataset():  # type: ignore[no-untyped-def]
    return make_dataset("Biology", seed=3)


def test_one_record_per_query_and_arm_with_every_field(dataset) -> None:  # type: ignore[no-untyped-def]
    records = records_for(dataset)
    assert len(records) == N_QUERIES * len(ARMS)
    assert {(r.arm, r.query.id) for r in records} == {(a, q) for a in ARMS for q in dataset.queries}
    for r in records:
        data = r.to_json()
        assert set(data) == TOP_LEVEL and data["@timestamp"] == TIMESTAMP
        assert EvalRecord.from_json(data) == r
        assert r.run_id and r.dataset == "Biology" and r.fusion == "rrf:k=60"


def test_ranks_follow_score_then_doc_id_descending_as_trec_eval() -> None:
    assert rank({"a": 1.0, "b": 1.0, "c": 2.0, "d": 0.5}) == [("c", 2.0), ("b", 1.0), ("a", 1.0), ("d", 0.5)]


def test_record_contents_agree_with_the_rankings(dataset) -> None:  # type: ignore[no-untyped-def]
    for r in records_for(dataset):
        arm, qid = r.arm, r.query.id
        ranking = [d for d, _ in sorted(dataset.runs[arm][qid].items(), key=lambda x: (x[1], x[0]), reverse=True)]
        judged = dataset.qrels[qid]
        relevant = {d for d, g in judged.items() if g > 0}
        positions = [i + 1 for i, d in enumerate(ranking) if d in relevant]
        first = positions[0] if positions else None
        assert r.first_relevant_rank == first
        assert r.metrics.reciprocal_rank == (1 / first if first else 0.0)
        assert r.metrics.ndcg_at_10 == dataset.per_query[arm]["ndcg@10"][qid]
        assert r.metrics.recall_at_100 == dataset.per_query[arm]["recall@100"][qid]
        assert (r.relevant.total, r.relevant.retrieved, r.relevant.missed, r.relevant.retrieved_in_top_10) == (
            len(relevant), len(positions), len(relevant) - len(positions), sum(1 for p in positions if p <= 10),
        )  # fmt: skip
        assert {m.id for m in r.missed} == relevant - set(ranking)
        for m in r.missed:
            assert m.title == dataset.corpus[m.id][0]
            assert dataset.corpus[m.id][1].startswith(m.snippet) and m.snippet
            assert arm not in m.retrieved_by
        assert [h.id for h in r.top_hits] == ranking[:TOP_HITS]
        for h in r.top_hits:
            assert h.judged == (h.id in judged) and h.grade == judged.get(h.id)
            assert h.score == dataset.runs[arm][qid][h.id]
        for a in r.attribution:
            assert list(a.arms) == [x for x in ARMS if a.id in dataset.runs[x][qid]]
            assert a.rank == (ranking.index(a.id) + 1 if a.id in ranking else None)
        ndcg = {x: dataset.per_query[x]["ndcg@10"][qid] for x in ARMS}
        assert r.arms_ndcg_at_10 == ndcg
        assert r.delta.ndcg_at_10 == pytest.approx(ndcg[arm] - ndcg["lexical"])
        cmp = r.comparison.ndcg_at_10_delta
        assert cmp == pytest.approx(ndcg["hybrid"] - ndcg["lexical"])
        assert r.comparison.outcome == ("won" if cmp > 1e-9 else "lost" if cmp < -1e-9 else "tied")
        assert r.batch_ms == dataset.latency_ms[arm][qid]


def test_the_synthetic_data_exercises_misses_ties_and_disagreement(dataset) -> None:  # type: ignore[no-untyped-def]
    records = records_for(dataset)
    assert any(r.missed for r in records)
    assert any(r.first_relevant_rank is None for r in records)
    assert {r.comparison.outcome for r in records} >= {"won", "lost"}
    assert any(len(set(run.values())) < len(run) for arm in ARMS for run in dataset.runs[arm].values())


def test_expansion_goes_to_expanded_arms_only(dataset) -> None:  # type: ignore[no-untyped-def]
    runs = {**dataset.runs, "lexical+hyde": dataset.runs["lexical"]}
    per_query = {**dataset.per_query, "lexical+hyde": dataset.per_query["lexical"]}
    context = RecordContext(
        run_id="r", timestamp=TIMESTAMP, dataset="Biology", queries=dataset.queries, qrels=dataset.qrels,
        runs=runs, per_query=per_query, doc_lookup=dataset.doc_lookup, batch_ms={},
        expansions=dataset.expansions,
    )  # fmt: skip
    for r in build_records(context):
        expected = dataset.expansions[r.query.id] if r.arm == "lexical+hyde" else None
        assert r.query.expansion == expected
        assert r.batch_ms is None


def test_errors_say_what_was_expected(dataset) -> None:  # type: ignore[no-untyped-def]
    per_query = {arm: {"ndcg@10": v["ndcg@10"]} for arm, v in dataset.per_query.items()}
    with pytest.raises(RunError, match=r"lack recall@100"):
        list(records_for(dataset, per_query=per_query))
    with pytest.raises(RunError, match=r"not in its queries"):
        list(records_for(dataset, qrels={"nope": {"d": 1}}))


def test_record_ids_are_deterministic_and_distinct() -> None:
    assert record_id("r", "d", "a", "q") == record_id("r", "d", "a", "q")
    assert len({record_id("r", "d", a, q) for a in ARMS for q in ("1", "2")}) == 6
    assert record_id("r", "d", "a", "q1") != record_id("r2", "d", "a", "q1")
