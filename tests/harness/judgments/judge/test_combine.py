"""Several judges' labels of one pair made one: mean, majority, min, max, by hand; failures take no part."""

from __future__ import annotations

import pytest

from base import ConfigError
from harness.judgments.judge import COMBINERS, combine, combiner


@pytest.mark.parametrize(
    ("how", "labels", "expected"),
    [
        ("mean", [1, 2, 3], 2),
        ("mean", [1, 2], 1),  # 1.5: halves go down
        ("mean", [2, 3, 3], 3),  # 2.67
        ("mean", [0, 1, 1], 1),  # 0.67
        ("mean", [0, 0, 1], 0),  # 0.33
        ("majority", [3, 3, 0], 3),
        ("majority", [0, 3], 0),  # a tie goes to the lowest
        ("majority", [2, 1, 2, 1, 3], 1),
        ("min", [2, 0, 3], 0),
        ("max", [2, 0, 3], 3),
    ],
)
def test_each_combiner_by_hand(how: str, labels: list[int], expected: int) -> None:
    assert combine(labels, COMBINERS[how]) == expected


def test_answers_that_did_not_parse_take_no_part() -> None:
    assert combine([None, 3, None], COMBINERS["min"]) == 3  # not min(0, 3): a failure is no grade
    assert combine([None, 1, 2], COMBINERS["mean"]) == 1
    assert combine([None, None], COMBINERS["max"]) is None  # nobody labelled: no label at all


def test_an_unknown_combiner_names_what_is_expected() -> None:
    with pytest.raises(ConfigError, match="expected --combine among mean, majority, min, max, found 'avg'"):
        combiner("avg")
