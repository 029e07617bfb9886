"""Paired significance tests, Holm–Bonferroni correction and bootstrap intervals.

R2MED has 77 to 150 queries per dataset, so small differences are often noise.
Everything here is seeded and deterministic: the same inputs and seed give the
same p-values and intervals on every machine.

* Randomization (default): two-sided paired sign-flip permutation test on
  per-query differences, ``p = (1 + #{|mean perm diff| >= |observed|}) / (1 + trials)``.
  Identical arms give p = 1.
* Paired t-test: two-sided, scipy's ``ttest_rel`` (through ranx); identical arms give p = 1.
* Holm–Bonferroni step-down adjustment across the whole family of comparisons
  in one :func:`compare_arms` call (arms x datasets).
* Percentile bootstrap confidence interval of a mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from base import ConfigError, timed
from harness._errors import RunError

DEFAULT_TRIALS = 10_000
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 42
DEFAULT_ALPHA = 0.05
_CHUNK = 1_000
# Permuted statistics equal to the observed one up to float rounding must count
# as "at least as extreme" (e.g. the identity permutation).
_REL_TOL = 1e-9


def _as_array(values: Sequence[float], what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise RunError(f"{what}: expected a non-empty list of per-query scores, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise RunError(f"{what}: per-query scores must be finite")
    return arr


def _paired(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    x, y = _as_array(a, "arm a"), _as_array(b, "arm b")
    if x.shape != y.shape:
        raise RunError(f"paired test needs equal lengths, got {x.size} and {y.size}")
    return x - y


def randomization_test(
    a: Sequence[float], b: Sequence[float], *, n_trials: int = DEFAULT_TRIALS, seed: int = DEFAULT_SEED
) -> float:
    """Two-sided paired randomization (sign-flip permutation) test; returns the p-value."""
    if n_trials < 1:
        raise ConfigError(f"randomization test needs n_trials >= 1, got {n_trials}")
    diff = _paired(a, b)
    observed = abs(float(diff.mean()))
    threshold = observed - _REL_TOL * max(observed, 1e-12)
    rng = np.random.default_rng(seed)
    extreme = 0
    done = 0
    while done < n_trials:
        size = min(_CHUNK, n_trials - done)
        signs = rng.integers(0, 2, size=(size, diff.size), dtype=np.int8) * 2 - 1
        stats = np.abs(signs @ diff) / diff.size
        extreme += int(np.count_nonzero(stats >= threshold))
        done += size
    return (extreme + 1) / (n_trials + 1)


def paired_t_test(a: Sequence[float], b: Sequence[float], **_: Any) -> float:
    """Two-sided paired Student's t-test; returns the p-value (1 when every difference is 0)."""
    # ranx's wrapper of scipy.stats.ttest_rel (two-sided); scipy comes with ranx.
    from ranx.statistical_tests import paired_student_t_test

    diff = _paired(a, b)
    if diff.size < 2:
        raise RunError(f"paired t-test needs at least 2 queries, got {diff.size}")
    if np.all(diff == diff[0]):
        # No variance: identical arms (p = 1) or a constant shift (p -> 0).
        return 1.0 if diff[0] == 0 else 0.0
    p_value, _ = paired_student_t_test(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return float(p_value)


STAT_TESTS: dict[str, Callable[..., float]] = {
    "randomization": randomization_test,
    "t-test": paired_t_test,
}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in input order (monotone step-down, capped at 1)."""
    m = len(p_values)
    for p in p_values:
        if not 0.0 <= p <= 1.0:
            raise RunError(f"p-values must lie in [0, 1], got {p}")
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class ConfidenceInterval:
    mean: float
    low: float
    high: float
    level: float = 0.95

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@timed("score")
def bootstrap_ci(
    values: Sequence[float],
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> ConfidenceInterval:
    """Percentile bootstrap interval of the mean of ``values`` (queries resampled with replacement)."""
    if not 0.0 < level < 1.0:
        raise ConfigError(f"confidence level must be in (0, 1), got {level}")
    if n_resamples < 1:
        raise ConfigError(f"bootstrap needs n_resamples >= 1, got {n_resamples}")
    arr = _as_array(values, "bootstrap")
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        idx = rng.integers(0, arr.size, size=(size, arr.size))
        means[start : start + size] = arr[idx].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return ConfidenceInterval(
        mean=math.fsum(arr.tolist()) / arr.size, low=float(low), high=float(high), level=level
    )


@dataclass(frozen=True)
class Comparison:
    """One paired comparison of two arms on one dataset and measure."""

    dataset: str
    arm_a: str
    arm_b: str
    measure: str
    n_queries: int
    mean_a: float
    mean_b: float
    delta: float
    """mean_b - mean_a."""
    p_value: float
    p_holm: float
    significant: bool
    """``p_holm < alpha``."""
    test: str
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _paired_queries(
    dataset: str,
    a: tuple[str, Mapping[str, float]],
    b: tuple[str, Mapping[str, float]],
    shared: bool,
) -> list[str]:
    """The queries a pair is tested on: both arms' (which must be the same), or, ``shared``, those both scored."""
    (arm_a, qa), (arm_b, qb) = a, b
    if shared:
        both = sorted(set(qa) & set(qb))
        if not both:
            raise RunError(
                f"dataset {dataset!r}: {arm_a} and {arm_b} scored no query in common; a paired test needs some"
            )
        return both
    if set(qa) != set(qb):
        only_a = sorted(set(qa) - set(qb))
        only_b = sorted(set(qb) - set(qa))
        raise RunError(
            f"dataset {dataset!r}: {arm_a} and {arm_b} cover different queries "
            f"({len(only_a)} only in {arm_a}, e.g. {only_a[:5]}; {len(only_b)} only in {arm_b}, "
            f"e.g. {only_b[:5]}); a paired test needs the same queries"
        )
    return sorted(qa)


@timed("score")
def compare_arms(
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]],
    pairs: Sequence[tuple[str, str]],
    *,
    measure: str = "ndcg@10",
    test: str = "randomization",
    alpha: float = DEFAULT_ALPHA,
    n_trials: int = DEFAULT_TRIALS,
    seed: int = DEFAULT_SEED,
    shared_queries: bool = False,
) -> list[Comparison]:
    """Compare arm pairs on every dataset of ``per_query[dataset][arm][qid]``, Holm-corrected together.

    Each pair ``(a, b)`` is tested on every dataset; both arms must be present
    there and cover exactly the same queries, or, with ``shared_queries`` (scores that leave out the
    queries without results, as R2MED's protocol does), the pair is tested on the queries both scored
    (``n_queries`` says how many). The family for Holm's correction is every comparison made by this call.
    """
    run_test = STAT_TESTS.get(test)
    if run_test is None:
        raise ConfigError(f"unknown significance test {test!r}; known tests: {', '.join(STAT_TESTS)}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be in (0, 1), got {alpha}")
    if not pairs:
        raise ConfigError("no arm pairs to compare")
    raw: list[tuple[str, str, str, int, float, float, float]] = []
    for dataset in sorted(per_query):
        arms = per_query[dataset]
        for arm_a, arm_b in pairs:
            missing = [a for a in (arm_a, arm_b) if a not in arms]
            if missing:
                raise RunError(
                    f"dataset {dataset!r}: cannot compare {arm_a} with {arm_b}: no scores for "
                    f"{', '.join(missing)} (arms present: {', '.join(sorted(arms)) or 'none'})"
                )
            qa, qb = arms[arm_a], arms[arm_b]
            qids = _paired_queries(dataset, (arm_a, qa), (arm_b, qb), shared_queries)
            a = [float(qa[q]) for q in qids]
            b = [float(qb[q]) for q in qids]
            p = run_test(a, b, n_trials=n_trials, seed=seed)
            mean_a = math.fsum(a) / len(a)
            mean_b = math.fsum(b) / len(b)
            raw.append((dataset, arm_a, arm_b, len(qids), mean_a, mean_b, p))
    adjusted = holm([r[-1] for r in raw])
    return [
        Comparison(
            dataset=d,
            arm_a=arm_a,
            arm_b=arm_b,
            measure=measure,
            n_queries=n,
            mean_a=mean_a,
            mean_b=mean_b,
            delta=mean_b - mean_a,
            p_value=p,
            p_holm=p_holm,
            significant=p_holm < alpha,
            test=test,
            alpha=alpha,
        )
        for (d, arm_a, arm_b, n, mean_a, mean_b, p), p_holm in zip(raw, adjusted, strict=True)
    ]
