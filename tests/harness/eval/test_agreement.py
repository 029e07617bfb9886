"""Agreement statistics against hand-computed cases and against scipy (a second implementation)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from base import ConfigError
from harness.eval import cohen_kappa, confusion, fleiss_kappa, kendall_tau, spearman_rho


def test_cohen_kappa_by_hand() -> None:
    # 10 items: agree on 7 (4 ones, 3 zeros); a says 1 six times, b says 1 five times
    a = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 1, 0, 0, 0]
    po, pe = 0.7, 0.6 * 0.5 + 0.4 * 0.5
    k = cohen_kappa(a, b)
    assert k.value == pytest.approx((po - pe) / (1 - pe))
    assert k.low <= k.value <= k.high and k.n == 10
    assert confusion(a, b).counts == ((3, 1), (2, 4))


def test_weighted_kappa_by_hand() -> None:
    # graded 0..3; linear weights: disagreement |i-j|/3
    a = [0, 1, 2, 3, 3, 2]
    b = [0, 2, 2, 1, 3, 3]
    labels = [0, 1, 2, 3]
    k = cohen_kappa(a, b, labels=labels, weights="linear")
    x, y = np.array(a), np.array(b)
    observed = np.abs(x - y).mean() / 3
    expected = np.mean([abs(i - j) for i in a for j in b]) / 3
    assert k.value == pytest.approx(1 - observed / expected)
    q = cohen_kappa(a, b, labels=labels, weights="quadratic")
    assert q.value == pytest.approx(1 - ((x - y) ** 2).mean() / np.mean([(i - j) ** 2 for i in a for j in b]))


def test_kappa_perfect_and_interval_is_seeded() -> None:
    a = [0, 1, 2, 1, 0, 2] * 5
    assert cohen_kappa(a, a).value == 1.0
    b = [0, 1, 1, 1, 0, 2] * 5
    assert cohen_kappa(a, b) == cohen_kappa(a, b)
    assert cohen_kappa(a, b, seed=1) != cohen_kappa(a, b, seed=2)


def test_fleiss_kappa_by_hand() -> None:
    # Fleiss (1971)-style toy: 4 items, 3 judges, labels 0/1
    ratings = [[1, 1, 1], [0, 0, 0], [1, 1, 0], [1, 0, 0]]
    # P_i: 1, 1, 1/3, 1/3 -> mean 2/3; p1 = 6/12, p0 = 6/12 -> Pe = 0.5
    assert fleiss_kappa(ratings) == pytest.approx((2 / 3 - 0.5) / 0.5)


def test_orderings_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = rng.integers(0, 5, size=8).astype(float)
        y = x + rng.normal(0, 1.5, size=8).round()
        assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
        assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)


def test_refusals_say_what_was_expected() -> None:
    with pytest.raises(ConfigError, match="same length, found 2 and 3"):
        cohen_kappa([0, 1], [0, 1, 1])
    with pytest.raises(ConfigError, match=r"labels among \[0, 1\], found \[2\]"):
        cohen_kappa([0, 1], [0, 2], labels=[0, 1])
    with pytest.raises(ConfigError, match="same number"):
        fleiss_kappa([[0, 1], [0, 1, 1]])
    with pytest.raises(ConfigError, match="two or more systems"):
        kendall_tau([0.5], [0.4])
