"""Agreement of click judgments with qrels: the O(n log n) tau-b, pairs matched, systems ordered."""

from __future__ import annotations

import numpy as np
import pytest

from base import ConfigError
from harness.eval import kendall_tau
from harness.judgments.clicks import (
    ClickJudgment,
    ClickJudgments,
    ClickModelSpec,
    agreement,
    graded_tau,
    system_agreement,
)


@pytest.mark.parametrize("seed", range(5))
def test_graded_tau_is_kendalls_tau_b(seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=300), 1)  # rounded: ties in the scores too
    grades = rng.integers(0, 4, size=300)
    assert graded_tau(scores.tolist(), grades.tolist()) == pytest.approx(
        kendall_tau(scores, grades), abs=1e-12
    )


def _judgments(rows: list[tuple[str, str, float, int]]) -> ClickJudgments:
    items = tuple(ClickJudgment(q, d, 10, 1, 1.0, s, g) for q, d, s, g in rows)
    return ClickJudgments(ClickModelSpec(), items, (0.5,), 10, 0)


def test_pairs_are_matched_by_query_id_and_unjudged_ones_count_as_zero() -> None:
    judged = _judgments(
        [("okra", "a", 3.0, 1), ("okra", "b", 0.2, 0), ("okra", "c", 2.5, 1), ("new", "x", 5.0, 1)]
    )
    reference = {"1": {"a": 1, "b": 0}}
    ids = {"okra": "1", "new": "2"}
    zero = agreement(judged, reference, ids)
    assert (zero.pairs, zero.unjudged) == (3, 2)  # c counts as 0; "new" has no reference query at all
    assert zero.confusion.counts == ((1, 0), (1, 1))
    skip = agreement(judged, reference, ids, unjudged="skip")
    assert skip.pairs == 2 and skip.kappa.value == 1.0 and skip.pair_tau == pytest.approx(1.0)
    with pytest.raises(ConfigError, match="two or more judged pairs"):
        agreement(judged, {"9": {"a": 1}}, ids)
    with pytest.raises(ConfigError, match="zero or skip"):
        agreement(judged, reference, ids, unjudged="drop")


def test_systems_are_ordered_under_both_labels() -> None:
    reference = {"1": {"a": 1, "b": 0, "c": 0}, "2": {"x": 1, "y": 0}}
    clicks = {"1": {"a": 0, "b": 1, "c": 0}, "2": {"x": 1, "y": 0}}  # clicks prefer b on query 1
    runs = {
        "finds-a": {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"x": 2.0, "y": 1.0}},
        "finds-b": {"1": {"b": 3.0, "a": 2.0, "c": 1.0}, "2": {"x": 2.0, "y": 1.0}},
        "finds-c": {"1": {"c": 3.0, "b": 2.0, "a": 1.0}, "2": {"y": 2.0, "x": 1.0}},
    }
    got = system_agreement(runs, reference, clicks)
    assert got.measure == "nDCG@10" and got.queries == 2
    assert got.reference["finds-a"] == pytest.approx(1.0) and got.clicks["finds-b"] == pytest.approx(1.0)
    assert got.tau == pytest.approx(1 / 3)  # a > b > c under the reference, b > a > c under clicks
    with pytest.raises(ConfigError, match="two or more runs"):
        system_agreement({"one": runs["finds-a"]}, reference, clicks)
