"""Paired significance tests, Holm correction, bootstrap intervals, arm comparisons."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from base import ConfigError
from harness import RunError
from harness.eval import (
    STAT_TESTS,
    Comparison,
    bootstrap_ci,
    compare_arms,
    holm,
    paired_t_test,
    randomization_test,
)


def scores(seed: int, n: int = 80) -> np.ndarray:
    return np.random.default_rng(seed).random(n)


def exact_sign_flip_p(a, b) -> float:
    """Exact two-sided paired permutation p-value by enumerating every sign vector (small n)."""
    diff = np.asarray(a) - np.asarray(b)
    observed = abs(diff.mean())
    signs = np.array(list(itertools.product([-1, 1], repeat=diff.size)))
    perm = np.abs(signs @ diff) / diff.size
    return float(np.mean(perm >= observed - 1e-12))


def test_randomization_identical_arms_give_p_one():
    a = scores(1)
    assert randomization_test(a, a.copy()) == 1.0


def test_randomization_clearly_better_arm_is_significant():
    a = scores(2)
    b = a + 0.15 + np.random.default_rng(3).normal(0, 0.05, a.size)
    p = randomization_test(a, b, n_trials=10_000, seed=0)
    assert p == pytest.approx(1 / 10_001)  # no permutation is as extreme
    assert randomization_test(b, a, n_trials=10_000, seed=0) == p  # two-sided


def test_randomization_matches_the_exact_test():
    a, b = scores(4, 12), scores(5, 12)
    exact = exact_sign_flip_p(a, b)
    approx = randomization_test(a, b, n_trials=20_000, seed=1)
    assert 0.05 < exact < 0.95  # a case where sampling matters
    assert approx == pytest.approx(exact, abs=0.015)


def test_randomization_is_deterministic_given_seed():
    a, b = scores(6), scores(7)
    assert randomization_test(a, b, seed=5) == randomization_test(a, b, seed=5)
    assert randomization_test(a, b, seed=5, n_trials=2_000) != randomization_test(
        a, b, seed=6, n_trials=2_000
    )


def test_paired_t_test_matches_the_formula():
    a, b = scores(8), scores(9)
    diff = a - b
    t = diff.mean() / (diff.std(ddof=1) / math.sqrt(diff.size))
    expected = 2 * scipy_stats.t.sf(abs(t), df=diff.size - 1)
    assert paired_t_test(a, b) == pytest.approx(expected, rel=1e-9)
    assert paired_t_test(a, a.copy()) == 1.0


def test_tests_reject_unpaired_inputs():
    with pytest.raises(RunError, match="equal lengths"):
        randomization_test([0.1, 0.2], [0.1])
    with pytest.raises(RunError, match="non-empty"):
        paired_t_test([], [])
    with pytest.raises(RunError, match="finite"):
        randomization_test([float("nan")], [0.0])


def test_holm_on_a_hand_computed_example():
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> max(0.06, 0.04)=0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []
    with pytest.raises(RunError):
        holm([1.5])


def test_bootstrap_ci_contains_the_mean_and_is_seeded():
    values = scores(10, 120)
    ci = bootstrap_ci(values, seed=3)
    assert ci.mean == pytest.approx(values.mean())
    assert ci.low < ci.mean < ci.high
    assert bootstrap_ci(values, seed=3) == ci
    assert bootstrap_ci(values, seed=4) != ci
    # Width close to the normal approximation 2 * 1.96 * sd / sqrt(n).
    normal = 2 * 1.96 * values.std(ddof=1) / math.sqrt(values.size)
    assert ci.high - ci.low == pytest.approx(normal, rel=0.15)
    assert set(ci.to_dict()) == {"mean", "low", "high", "level"}
    with pytest.raises(ConfigError):
        bootstrap_ci(values, level=1.0)


def per_query_table():
    qids = [f"q{i}" for i in range(60)]
    rng = np.random.default_rng(11)
    table = {}
    for dataset, lift in (("biology", 0.2), ("medicine", 0.0)):
        base = rng.random(len(qids))
        table[dataset] = {
            "lexical": dict(zip(qids, base.tolist(), strict=True)),
            "vector": dict(zip(qids, (base * 0.9).tolist(), strict=True)),
            "hybrid": dict(zip(qids, np.clip(base + lift, 0, 1).tolist(), strict=True)),
        }
    return table


@pytest.mark.parametrize("test", sorted(STAT_TESTS))
def test_compare_arms_shape_and_holm_family(test):
    table = per_query_table()
    pairs = [("lexical", "hybrid"), ("vector", "hybrid")]
    out = compare_arms(table, pairs, measure="ndcg@10", test=test, n_trials=2_000)
    assert [(c.dataset, c.arm_a, c.arm_b) for c in out] == [
        (d, a, b) for d in ("biology", "medicine") for a, b in pairs
    ]
    assert all(isinstance(c, Comparison) and c.test == test and c.n_queries == 60 for c in out)
    assert [c.p_holm for c in out] == pytest.approx(holm([c.p_value for c in out]))
    by = {(c.dataset, c.arm_a): c for c in out}
    assert by["biology", "lexical"].significant and by["biology", "lexical"].delta > 0
    assert not by["medicine", "lexical"].significant  # identical arms
    assert by["medicine", "lexical"].p_value == 1.0
    c = by["biology", "vector"]
    assert c.delta == pytest.approx(c.mean_b - c.mean_a)
    assert set(c.to_dict()) >= {"dataset", "arm_a", "arm_b", "measure", "p_value", "p_holm", "significant"}


def test_compare_arms_is_deterministic():
    table = per_query_table()
    pairs = [("lexical", "vector")]
    assert compare_arms(table, pairs, n_trials=1_000) == compare_arms(table, pairs, n_trials=1_000)


def test_compare_arms_errors():
    table = per_query_table()
    table["biology"]["vector"] = dict(list(table["biology"]["vector"].items())[:-1])
    with pytest.raises(RunError, match="cover different queries"):
        compare_arms(table, [("lexical", "vector")])
    with pytest.raises(RunError, match="no scores for bm25"):
        compare_arms(per_query_table(), [("bm25", "vector")])
    with pytest.raises(ConfigError, match="known tests: randomization, t-test"):
        compare_arms(per_query_table(), [("lexical", "vector")], test="wilcoxon")
    with pytest.raises(ConfigError, match="no arm pairs"):
        compare_arms(per_query_table(), [])
