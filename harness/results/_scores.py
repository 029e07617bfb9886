"""An arm's scores as ``results.json`` holds them: the mean of every measure and its 95% bootstrap interval."""

from __future__ import annotations

from harness.eval import Evaluation, bootstrap_ci


def scores_and_intervals(
    evaluation: Evaluation, seed: int
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Mean of every measure (6 decimals) and its 95% bootstrap interval, as results.json holds them."""
    ci95 = {}
    for key in evaluation.means:
        ci = bootstrap_ci(list(evaluation.per_query[key].values()), seed=seed)
        ci95[key] = (round(ci.low, 6), round(ci.high, 6))
    return {k: round(v, 6) for k, v in evaluation.means.items()}, ci95
