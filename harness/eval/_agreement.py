"""Agreement between labellers and between system orderings: how far a judge (an LLM, a click model) can be
trusted for the decision at hand.

* On labels: :func:`cohen_kappa` (unweighted for binary or nominal labels; ``linear`` or ``quadratic``
  weights for graded ones) with a seeded bootstrap interval, :func:`confusion` (the matrix behind it), and
  :func:`fleiss_kappa` among several judges of the same items.
* On systems: :func:`kendall_tau` (tau-b, ties handled) and :func:`spearman_rho` (average ranks) of two
  orderings of the same systems, e.g. arms ordered by nDCG@10 under human and under judge labels.

Pure numpy; every function says what it expected when the input cannot give a figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from base import ConfigError

KAPPA_WEIGHTS = ("none", "linear", "quadratic")
BOOTSTRAP_RESAMPLES = 1000


@dataclass(frozen=True, slots=True)
class Confusion:
    """Counts of (first labeller's label, second's): ``counts[i][j]`` for ``labels[i]``, ``labels[j]``."""

    labels: tuple[int, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def total(self) -> int:
        return sum(sum(row) for row in self.counts)

    def to_dict(self) -> dict[str, object]:
        return {"labels": list(self.labels), "counts": [list(row) for row in self.counts]}


@dataclass(frozen=True, slots=True)
class Kappa:
    """A kappa with its bootstrap interval (``low``, ``high``) over ``n`` items."""

    value: float
    low: float
    high: float
    n: int
    weights: str = "none"

    def to_dict(self) -> dict[str, object]:
        return {"value": self.value, "ci": [self.low, self.high], "n": self.n, "weights": self.weights}


def _pairs(a: Sequence[int], b: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    if len(a) != len(b):
        raise ConfigError(f"expected two label lists of the same length, found {len(a)} and {len(b)}")
    if not a:
        raise ConfigError("expected labelled items to measure agreement on, found none")
    return np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)


def _labels(a: np.ndarray, b: np.ndarray, labels: Sequence[int] | None) -> tuple[int, ...]:
    found = sorted(set(a.tolist()) | set(b.tolist()))
    if labels is None:
        return tuple(found)
    unknown = sorted(set(found) - set(labels))
    if unknown:
        raise ConfigError(f"expected labels among {list(labels)}, found {unknown}")
    return tuple(sorted(labels))


def confusion(a: Sequence[int], b: Sequence[int], labels: Sequence[int] | None = None) -> Confusion:
    """The confusion matrix of two labellings of the same items (rows: ``a``, columns: ``b``)."""
    x, y = _pairs(a, b)
    scale = _labels(x, y, labels)
    matrix = _matrix(_codes(x, scale), _codes(y, scale), len(scale))
    return Confusion(scale, tuple(tuple(int(c) for c in row) for row in matrix))


def _codes(values: np.ndarray, scale: tuple[int, ...]) -> np.ndarray:
    """Each label's position on ``scale``."""
    return np.searchsorted(np.asarray(scale, dtype=np.int64), values)


def _matrix(rows: np.ndarray, cols: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(rows * k + cols, minlength=k * k).reshape(k, k).astype(np.float64)


def _disagreement(scale: tuple[int, ...], weights: str) -> np.ndarray:
    if weights not in KAPPA_WEIGHTS:
        raise ConfigError(f"expected kappa weights among {', '.join(KAPPA_WEIGHTS)}, found {weights!r}")
    values = np.asarray(scale, dtype=np.float64)
    distance = np.abs(values[:, None] - values[None, :])
    if weights == "none":
        return (distance > 0).astype(np.float64)
    span = max(float(values.max() - values.min()), 1.0)
    return distance / span if weights == "linear" else (distance / span) ** 2


def _kappa(matrix: np.ndarray, cost: np.ndarray) -> float:
    total = matrix.sum()
    observed = (cost * matrix).sum() / total
    expected = (cost * np.outer(matrix.sum(axis=1), matrix.sum(axis=0))).sum() / total**2
    if expected == 0.0:  # both labellers gave one and the same label throughout: agreement is not measurable
        return 1.0 if observed == 0.0 else 0.0
    return float(1.0 - observed / expected)


def cohen_kappa(
    a: Sequence[int],
    b: Sequence[int],
    *,
    labels: Sequence[int] | None = None,
    weights: str = "none",
    seed: int = 42,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
) -> Kappa:
    """Cohen's kappa of two labellings of the same items (weighted for graded scales), with a percentile
    bootstrap interval over the items (seeded: the same input gives the same interval)."""
    x, y = _pairs(a, b)
    scale = _labels(x, y, labels)
    cost, k = _disagreement(scale, weights), len(scale)
    rows, cols = _codes(x, scale), _codes(y, scale)
    value = _kappa(_matrix(rows, cols, k), cost)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(x), size=(resamples, len(x)))
    boot = np.array([_kappa(_matrix(rows[d], cols[d], k), cost) for d in draws])
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [tail, 1.0 - tail])
    return Kappa(value, float(low), float(high), len(x), weights)


def fleiss_kappa(ratings: Sequence[Sequence[int]], labels: Sequence[int] | None = None) -> float:
    """Fleiss' kappa of items each labelled by the same number (two or more) of judges."""
    if not ratings:
        raise ConfigError("expected items labelled by several judges, found none")
    raters = {len(r) for r in ratings}
    if len(raters) != 1 or min(raters) < 2:
        raise ConfigError(
            f"expected every item labelled by the same number (>= 2) of judges, found {sorted(raters)}"
        )
    n = raters.pop()
    flat = [v for r in ratings for v in r]
    scale = _labels(np.asarray(flat), np.asarray(flat), labels)
    codes = _codes(np.asarray(ratings, dtype=np.int64), scale)
    counts = np.stack([(codes == c).sum(axis=1) for c in range(len(scale))], axis=1).astype(np.float64)
    per_item = ((counts * (counts - 1.0)).sum(axis=1)) / (n * (n - 1.0))
    shares = counts.sum(axis=0) / counts.sum()
    expected = float((shares**2).sum())
    observed = float(per_item.mean())
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1, dtype=np.float64)
    for v in np.unique(values):
        tied = values == v
        ranks[tied] = ranks[tied].mean()
    return ranks


def _systems(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    if len(x) != len(y):
        raise ConfigError(f"expected two scores per system, found {len(x)} and {len(y)} scores")
    if len(x) < 2:
        raise ConfigError(f"expected two or more systems to order, found {len(x)}")
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b between two scorings of the same systems (ties in either count as neither order)."""
    a, b = _systems(x, y)
    i, j = np.triu_indices(len(a), k=1)
    da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    concordant = float((da * db).sum())
    pairs_a, pairs_b = float(np.count_nonzero(da)), float(np.count_nonzero(db))
    if pairs_a == 0.0 or pairs_b == 0.0:
        return 0.0
    return concordant / float(np.sqrt(pairs_a * pairs_b))


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: the Pearson correlation of the two scorings' average ranks."""
    a, b = _systems(x, y)
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    norm = float(np.sqrt((ra**2).sum() * (rb**2).sum()))
    return float((ra * rb).sum() / norm) if norm else 0.0
