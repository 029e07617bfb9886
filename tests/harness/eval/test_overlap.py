"""overlap@k (Jaccard of the top-k sets) and RBO_ext (Webber, Moffat & Zobel 2010, eq. 32).

Expected values are derived by hand in the comments (p = 0.9 unless said), and the implementation
is checked against a direct transcription of eq. 32 that recomputes every prefix overlap X_d from
scratch (no incremental bookkeeping) on seeded random lists of uneven length.
"""

from __future__ import annotations

import random

import pytest

from base import ConfigError
from harness import RunError
from harness.eval import (
    Overlap,
    compare_overlap,
    overlap_at_k,
    query_overlaps,
    rankings,
    rbo,
    run_overlaps,
    summarize,
)


def rbo_ext_by_the_formula(a: list[str], b: list[str], p: float) -> float:
    """Eq. 32 term by term: S the shorter list (s), L the longer (l), X_d = |S[:d] ∩ L[:d]|."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long_)  # noqa: E741

    def x(d: int) -> int:
        return len(set(short[:d]) & set(long_[:d]))

    first = sum(x(d) / d * p**d for d in range(1, l + 1))
    second = sum(x(s) * (d - s) / (s * d) * p**d for d in range(s + 1, l + 1))
    return (1 - p) / p * (first + second) + ((x(l) - x(s)) / l + x(s) / s) * p**l


def test_identical_rankings_score_one_and_disjoint_ones_zero() -> None:
    docs = [f"d{i}" for i in range(25)]
    assert rbo(docs, docs) == pytest.approx(1.0, abs=1e-12)
    assert overlap_at_k(docs, docs, 10) == 1.0
    assert rbo(["a", "b", "c"], ["x", "y", "z"]) == 0.0
    assert overlap_at_k(["a", "b", "c"], ["x", "y", "z"], 10) == 0.0
    # the same top 10 in another order: overlap@10 does not see it, RBO does
    assert overlap_at_k(docs[:10], docs[9::-1], 10) == 1.0
    assert rbo(docs[:10], docs[9::-1]) < 0.8


def test_swapping_the_first_two_costs_exactly_one_minus_p() -> None:
    # S = a b c d e, L = b a c d e: X_1 = 0, X_2 = 2, X_3 = 3, X_4 = 4, X_5 = 5 (s = l = 5)
    # RBO_ext = (1-p)/p * (0 + p^2 + p^3 + p^4 + p^5) + 5/5 * p^5
    #         = (0.1/0.9) * (0.81 + 0.729 + 0.6561 + 0.59049) + 0.59049 = 0.30951 + 0.59049 = 0.9
    assert rbo(list("abcde"), list("bacde"), 0.9) == pytest.approx(0.9, abs=1e-12)
    assert rbo(list("abcde"), list("bacde"), 0.5) == pytest.approx(0.5, abs=1e-12)


def test_a_worked_example_with_partial_overlap() -> None:
    # S = a b c, L = a c d: X_1 = 1, X_2 = |{a,b} ∩ {a,c}| = 1, X_3 = |{a,b,c} ∩ {a,c,d}| = 2
    # RBO_ext = (1/9) * (1/1 * 0.9 + 1/2 * 0.81 + 2/3 * 0.729) + 2/3 * 0.729
    #         = (1/9) * (0.9 + 0.405 + 0.486) + 0.486 = 0.199 + 0.486 = 0.685
    assert rbo(list("abc"), list("acd")) == pytest.approx(0.685, abs=1e-12)
    # overlap@2 = |{a}| / |{a,b,c}| = 1/3; overlap@3 = |{a,c}| / |{a,b,c,d}| = 1/2
    assert overlap_at_k(list("abc"), list("acd"), 2) == pytest.approx(1 / 3)
    assert overlap_at_k(list("abc"), list("acd"), 3) == 0.5


def test_uneven_lengths_follow_eq_32() -> None:
    # S = a b (s = 2), L = b c a (l = 3): X_1 = 0, X_2 = 1 = X_s, X_3 = |{a,b} ∩ {b,c,a}| = 2 = X_l
    # first sum  = 0 + 1/2 * 0.81 + 2/3 * 0.729 = 0.405 + 0.486 = 0.891
    # second sum = X_s (3-2)/(2*3) * 0.729 = 0.1215
    # RBO_ext    = (1/9) * (0.891 + 0.1215) + ((2-1)/3 + 1/2) * 0.729 = 0.1125 + 0.6075 = 0.72
    assert rbo(["a", "b"], ["b", "c", "a"]) == pytest.approx(0.72, abs=1e-12)
    assert rbo(["b", "c", "a"], ["a", "b"]) == pytest.approx(0.72, abs=1e-12)  # symmetric
    # a list that is a prefix of the other: the agreement is extrapolated, so 1
    # (S = a: X_1 = X_2 = 1; (1/9)(0.9 + 0.405 + 1*1/2*0.81) + (0 + 1) * 0.81 = 0.19 + 0.81)
    assert rbo(["a"], ["a", "b"]) == pytest.approx(1.0, abs=1e-12)
    # overlap@k with a list shorter than k: the sets are what the lists hold
    assert overlap_at_k(["a", "b"], ["b", "c", "a"], 10) == pytest.approx(2 / 3)


def test_matches_the_formula_term_by_term_on_random_lists() -> None:
    rng = random.Random(7)
    for _ in range(300):
        pool = [f"d{i}" for i in range(rng.randint(1, 40))]
        a = rng.sample(pool, rng.randint(1, len(pool)))
        b = rng.sample(pool, rng.randint(1, len(pool)))
        p = rng.choice([0.5, 0.9, 0.98])
        assert rbo(a, b, p) == pytest.approx(rbo_ext_by_the_formula(a, b, p), abs=1e-12)
        assert rbo(a, b, p) == pytest.approx(rbo(b, a, p), abs=1e-12)
        assert 0.0 <= rbo(a, b, p) <= 1.0


def test_empty_rankings() -> None:
    assert rbo([], []) == 1.0 and overlap_at_k([], [], 10) == 1.0  # nothing moved
    assert rbo([], ["a"]) == 0.0 and rbo(["a"], []) == 0.0
    assert overlap_at_k([], ["a"], 10) == 0.0


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match=r"persistence p in \(0, 1\), got 1"):
        rbo(["a"], ["a"], 1.0)
    with pytest.raises(ConfigError, match="k >= 1, got 0"):
        overlap_at_k(["a"], ["a"], 0)
    with pytest.raises(RunError, match=r"query 'q1': second ranking: .* found 'b' twice"):
        query_overlaps({"q1": ["a", "b"]}, {"q1": ["b", "c", "b"]})


def test_runs_are_ranked_by_score_then_doc_id_whatever_the_insertion_order() -> None:
    tied = {"q": {"d2": 1.0, "d1": 1.0, "d3": 0.5}}
    assert rankings(tied) == {"q": ["d2", "d1", "d3"]}
    same_order = {"q": {"d3": 0.1, "d2": 9.0, "d1": 3.0}}
    [row] = run_overlaps(tied, same_order)
    assert (row.overlap, row.rbo) == (1.0, pytest.approx(1.0, abs=1e-12))
    # trec_eval's order puts the tie d2 above d1; d1 above d2 swaps the top two of three:
    # (1/9)(0 + 0.81 + 0.729) + 0.729 = 0.9
    swapped = {"q": {"d1": 2.0, "d2": 1.0, "d3": 0.0}}
    assert run_overlaps(tied, swapped)[0].rbo == pytest.approx(0.9, abs=1e-12)


def test_queries_of_one_run_only_count_with_an_empty_ranking_and_empty_pairs_are_left_out() -> None:
    a = {"q1": {"x": 2.0, "y": 1.0}, "q2": {"z": 1.0}, "q4": {}}
    b = {"q1": {"x": 2.0, "y": 1.0}, "q3": {"w": 1.0}, "q4": {}}
    rows = run_overlaps(a, b, k=10)
    assert [(r.qid, r.overlap, r.rbo) for r in rows] == [
        ("q1", 1.0, pytest.approx(1.0)),
        ("q2", 0.0, 0.0),
        ("q3", 0.0, 0.0),
    ]
    summary = summarize("d", "a", "b", rows, k=10, p=0.9)
    assert summary == Overlap(
        "d", "a", "b", 10, 0.9, 3, round(1 / 3, 6), round(1 / 3, 6), changed=2, variant="rbo_ext"
    )
    assert run_overlaps({}, {}) == []
    assert summarize("d", "a", "b", []).queries == 0


def test_compare_overlap_takes_every_pair_on_every_dataset_that_holds_both_arms() -> None:
    ranked = {
        "d1": {"lexical": {"q": ["a", "b", "c"]}, "hybrid": {"q": ["a", "c", "d"]}},
        "d2": {"lexical": {"q": ["a"]}},
    }
    [(summary, rows)] = compare_overlap(ranked, [("lexical", "hybrid")], k=3)
    assert (summary.dataset, summary.arm_a, summary.arm_b, summary.k, summary.p) == (
        "d1",
        "lexical",
        "hybrid",
        3,
        0.9,
    )
    assert summary.overlap == 0.5 and summary.rbo == 0.685 and summary.changed == 1
    assert [r.qid for r in rows] == ["q"]
