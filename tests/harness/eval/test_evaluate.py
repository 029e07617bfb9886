"""harness.eval.evaluate against an independent implementation (ir_measures / pytrec_eval)."""

from __future__ import annotations

import math
import random

import ir_measures
import pytest

from base import DataError
from harness import RunError
from harness.eval import DEFAULT_MEASURES, Measure, evaluate, rank

from .conftest import synthetic_run

TOL = 1e-6


def reference(qrels, run, measures=DEFAULT_MEASURES):
    """Per-query scores from ir_measures, keyed like ours (Unjudged = 1 - Judged)."""
    by_name = {m.ir_measures_name: m for m in measures}
    parsed = [ir_measures.parse_measure(name) for name in by_name]
    out: dict[str, dict[str, float]] = {m.key: {} for m in measures}
    for metric in ir_measures.iter_calc(parsed, qrels, run):
        m = by_name[str(metric.measure)]
        value = 1.0 - metric.value if m.name == "Unjudged" else metric.value
        out[m.key][metric.query_id] = value
    return out


def assert_matches_reference(ours, ref, qids):
    for key, scores in ref.items():
        assert set(scores) == set(qids), key
        for qid in qids:
            assert ours.per_query[key][qid] == pytest.approx(scores[qid], abs=TOL), (key, qid)
        ref_mean = math.fsum(scores.values()) / len(qids)
        assert ours.means[key] == pytest.approx(ref_mean, abs=TOL), key


def test_pytrec_eval_backs_the_reference():
    # The comparison is only independent if ir_measures uses pytrec_eval (trec_eval), not ranx.
    provider = ir_measures.providers.registry["pytrec_eval"]
    assert provider.is_available()


@pytest.mark.parametrize("skill", [0.0, 0.6])
def test_binary_scifact_matches_ir_measures(scifact_test_qrels, skill):
    run = synthetic_run(scifact_test_qrels, seed=1, skill=skill)
    ours = evaluate(scifact_test_qrels, run)
    assert ours.qids == tuple(sorted(scifact_test_qrels))
    assert not ours.empty_qids and not ours.unjudged_qids
    assert_matches_reference(ours, reference(scifact_test_qrels, run), ours.qids)
    assert 0.0 < ours.mean("nDCG@10") < 1.0


def test_graded_qrels_with_grade_zero_match_ir_measures(graded_qrels):
    run = synthetic_run(graded_qrels, seed=2, skill=0.3)
    # The synthetic run retrieves some of the grade-0 judged docs: they must count as judged, not relevant.
    zero_hits = sum(1 for q in run for d in run[q] if graded_qrels[q].get(d) == 0)
    assert zero_hits > 0
    ours = evaluate(graded_qrels, run)
    assert_matches_reference(ours, reference(graded_qrels, run), ours.qids)


def test_grade_zero_is_judged_but_not_relevant():
    qrels = {"q": {"a": 0, "b": 2}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    ev = evaluate(qrels, run, ["nDCG@10", "MRR@100", "P@10", "Recall@10", "Unjudged@10"])
    assert ev.mean("MRR@100") == pytest.approx(1 / 2)
    assert ev.mean("nDCG@10") == pytest.approx((2 / math.log2(3)) / 2)  # b at rank 2, ideal b at rank 1
    assert ev.mean("P@10") == pytest.approx(1 / 10)
    assert ev.mean("Recall@10") == pytest.approx(1.0)
    assert ev.mean("Unjudged@10") == pytest.approx(1 / 10)  # only c is unjudged: trec_eval's unj divides by k


def test_negative_grades_are_read_as_trec_eval_reads_them():
    # trec_eval: a negative grade is in the pool but not judged: never relevant, counted by unj, dropped by -J
    qrels = {"q": {"a": -1, "b": 2, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    ev = evaluate(qrels, run, ["P@10", "Unjudged@10", "nDCG_judged@10", "MRR", "Bpref"])
    assert ev.mean("P@10") == pytest.approx(1 / 10)
    assert ev.mean("Unjudged@10") == pytest.approx(1 / 10)
    assert ev.mean("nDCG_judged@10") == pytest.approx(1.0)  # a dropped: b first of what is left
    assert ev.mean("MRR") == pytest.approx(1 / 2)
    assert ev.mean("Bpref") == pytest.approx(1.0)  # no judged non-relevant above b


def test_relevance_level_makes_grade_one_non_relevant_for_binary_measures_only():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    at_two = evaluate(qrels, run, ["P@10", "MRR", "Recall@10", "nDCG@10", "P(rel=1)@10"], relevance_level=2)
    assert at_two.mean("P@10") == pytest.approx(1 / 10)
    assert at_two.mean("P(rel=1)@10") == pytest.approx(2 / 10)  # a measure's own level wins
    assert at_two.mean("MRR") == pytest.approx(1 / 2)
    assert at_two.mean("Recall@10") == pytest.approx(1.0)
    at_one = evaluate(qrels, run, ["nDCG@10"])
    assert at_two.mean("nDCG@10") == at_one.mean("nDCG@10")  # gains are grades at any level, as trec_eval's


def test_without_trec_evals_c_the_mean_is_over_queries_with_results():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    assert evaluate(qrels, run, ["P@1"]).mean("P@1") == pytest.approx(0.5)
    alone = evaluate(qrels, run, ["P@1"], complete=False)
    assert alone.mean("P@1") == pytest.approx(1.0)
    assert alone.qids == ("q1",) and alone.empty_qids == ()


def test_missing_and_empty_queries_count_as_zero(scifact_test_qrels):
    qids = sorted(scifact_test_qrels)[:20]
    qrels = {q: scifact_test_qrels[q] for q in qids}
    full = synthetic_run(qrels, seed=3, skill=0.8)
    run = {q: full[q] for q in qids[:10]}  # qids[15:] missing
    for q in qids[10:15]:
        run[q] = {}  # present but empty
    run["not-judged"] = {"x": 1.0}
    ev = evaluate(qrels, run)
    assert ev.qids == tuple(qids)
    assert ev.empty_qids == tuple(qids[10:])
    assert ev.unjudged_qids == ("not-judged",)
    only_scored = evaluate({q: qrels[q] for q in qids[:10]}, {q: full[q] for q in qids[:10]})
    for m in DEFAULT_MEASURES:
        for q in qids[10:]:
            assert ev.per_query[m.key][q] == 0.0
        # Mean over all 20 judged queries, not over the 10 with results.
        assert ev.means[m.key] == pytest.approx(only_scored.means[m.key] * 10 / 20, abs=1e-12)
    assert ev.mean("nDCG@10") > 0


def test_run_with_no_results_at_all_scores_zero(scifact_test_qrels):
    qrels = {q: scifact_test_qrels[q] for q in sorted(scifact_test_qrels)[:5]}
    ev = evaluate(qrels, {})
    assert ev.empty_qids == ev.qids
    assert all(v == 0.0 for v in ev.means.values())


def test_ties_break_by_doc_id_descending_as_trec_eval():
    qrels = {"q1": {"b": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0}, "q2": {"c": 1.0, "b": 1.0}}
    ev = evaluate(qrels, run, ["MRR@100"])
    assert ev.scores("MRR@100") == {"q1": 1.0, "q2": 0.5}


def test_tied_run_is_order_independent_and_matches_reference(graded_qrels):
    tied = {
        q: {d: round(s, 1) for d, s in docs.items()}
        for q, docs in synthetic_run(graded_qrels, seed=4, skill=0.3).items()
    }
    assert any(len(set(d.values())) < len(d) for d in tied.values())
    ours = evaluate(graded_qrels, tied)

    shuffled = {}
    rng = random.Random(0)
    for q in reversed(list(tied)):
        items = list(tied[q].items())
        rng.shuffle(items)
        shuffled[q] = dict(items)
    again = evaluate(graded_qrels, shuffled)
    assert again.per_query == ours.per_query

    # Independent check: give trec_eval the order we promise (score desc, doc id asc) without ties.
    explicit = {
        q: {d: float(len(docs) - i) for i, (d, _) in enumerate(rank(docs))} for q, docs in tied.items()
    }
    assert_matches_reference(ours, reference(graded_qrels, explicit), ours.qids)


def test_evaluation_rows_and_accessors(scifact_test_qrels):
    qrels = {q: scifact_test_qrels[q] for q in sorted(scifact_test_qrels)[:3]}
    ev = evaluate(qrels, synthetic_run(qrels, seed=5), "nDCG@10,P@10")
    assert ev.measures == (Measure("nDCG", 10), Measure("P", 10))
    rows = ev.per_query_rows()
    assert [r["qid"] for r in rows] == list(ev.qids)
    assert set(rows[0]) == {"qid", "ndcg@10", "p@10"}


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(DataError, match="empty"):
        evaluate({}, {"q": {"a": 1.0}})
    with pytest.raises(DataError, match="not an integer"):
        evaluate({"q": {"a": 1.5}}, {"q": {"a": 1.0}})
    with pytest.raises(RunError, match="NaN"):
        evaluate({"q": {"a": 1}}, {"q": {"a": float("nan")}})


def test_judged_only_ndcg_by_hand():
    """Sakai's condensed list: z (unjudged) is removed, so b (grade 0) and a (grade 1) move up."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}, "q2": {"x": 1}}
    run = {"q": {"z": 5.0, "b": 4.0, "a": 3.0}, "q2": {"y": 3.0}}
    ev = evaluate(qrels, run, ["nDCG@10", "nDCG_judged@10"])
    ideal = 2 + 1 / math.log2(3)
    assert ev.scores("nDCG_judged@10")["q"] == pytest.approx((1 / math.log2(3)) / ideal)
    assert ev.scores("nDCG@10")["q"] == pytest.approx((1 / math.log2(4)) / ideal)
    assert ev.scores("nDCG_judged@10")["q2"] == 0.0  # nothing judged was retrieved


def test_judged_only_ndcg_looks_past_the_cutoff_like_ir_measures(scifact_test_qrels):
    """Relevant documents only below rank 10 (and below the deepest cutoff, 100): the condensed ranking
    brings them into the top 10, exactly as pytrec_eval's judged_only flag does."""
    qids = sorted(scifact_test_qrels)[:30]
    qrels = {q: scifact_test_qrels[q] for q in qids}
    run: dict[str, dict[str, float]] = {}
    for i, qid in enumerate(qids):
        distractors = {f"u{i}-{j}": 1000.0 - j for j in range(10 + 12 * (i % 10))}
        judged = {doc: 1.0 - k / 100 for k, doc in enumerate(sorted(qrels[qid]))}
        run[qid] = {**distractors, **judged}
    ours = evaluate(qrels, run, ["nDCG@10", "nDCG_judged@10", "Unjudged@10"])
    ref = reference(qrels, run, [Measure.parse("nDCG_judged@10"), Measure.parse("nDCG@10")])
    assert_matches_reference(ours, ref, ours.qids)
    assert ours.mean("nDCG@10") == 0.0 and ours.mean("Unjudged@10") == 1.0
    assert ours.mean("nDCG_judged@10") > 0.9


def test_err_by_hand():
    # a (grade 2), b (0), c (3) on a 0..3 scale: R = 3/8, 0, 7/8
    qrels = {"q": {"a": 2, "b": 0, "c": 3}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    got = evaluate(qrels, run, ["ERR@3", "ERR@2", "ERR@1"])
    assert got.mean("ERR@1") == pytest.approx(3 / 8)
    assert got.mean("ERR@2") == pytest.approx(3 / 8)  # b stops nobody
    assert got.mean("ERR@3") == pytest.approx(3 / 8 + (5 / 8) * (7 / 8) / 3)  # 0.5572916...
    # declared 0..4 scale (gdeval's): R = 3/16, 0, 7/16
    declared = evaluate(qrels, run, ["ERR@3"], max_grade=4)
    assert declared.mean("ERR@3") == pytest.approx(3 / 16 + (13 / 16) * (7 / 16) / 3)


def test_err_on_a_declared_scale_matches_ir_measures_gdeval(graded_qrels):
    # ir_measures' ERR@k is gdeval's, whose scale tops out at grade 4: declare the same scale
    run = synthetic_run(graded_qrels, seed=3, skill=0.4)
    measures = [Measure.parse("ERR@10"), Measure.parse("ERR@20")]
    ours = evaluate(graded_qrels, run, measures, max_grade=4)
    ref = reference(graded_qrels, run, measures)
    for m in measures:  # gdeval prints 5 decimals
        assert set(ref[m.key]) == set(ours.qids)
        assert all(ours.per_query[m.key][q] == pytest.approx(v, abs=6e-6) for q, v in ref[m.key].items())
        assert 0.1 < ours.mean(m) < 0.9
    by_qrels = evaluate(graded_qrels, run, measures)  # scale from the qrels: top grade 3, larger R
    assert by_qrels.mean("ERR@10") > ours.mean("ERR@10")


def test_err_refuses_a_scale_below_the_grades():
    with pytest.raises(DataError, match=r"0\.\.2 scale"):
        evaluate({"q": {"a": 3}}, {"q": {"a": 1.0}}, ["ERR@10"], max_grade=2)
