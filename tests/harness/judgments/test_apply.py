"""How another source's judgments meet a dataset's (rescore and an experiment's [judgments] alike)."""

from __future__ import annotations

import pytest

from harness.judgments import DEFAULT_MODE, MODES, judgments_used, merge_judgments

BASE = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
EXTRA = {"q1": {"a": 0, "d": 1}, "q3": {"e": 3}}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("merge", {"q1": {"a": 0, "b": 0, "d": 1}, "q2": {"c": 2}, "q3": {"e": 3}}),
        ("fill", {"q1": {"a": 1, "b": 0, "d": 1}, "q2": {"c": 2}, "q3": {"e": 3}}),
        ("replace", {"q1": {"a": 0, "d": 1}, "q3": {"e": 3}}),
    ],
)
def test_each_mode_meets_the_datasets_judgments_its_way(
    mode: str, expected: dict[str, dict[str, int]]
) -> None:
    merged = merge_judgments(BASE, EXTRA, mode)
    assert merged.qrels == expected and merged.added == 2  # d and e are new; a was judged before
    assert merged.changed == (0 if mode == "fill" else 1)  # a: 1 -> 0 where the other source's grade wins


def test_what_the_figures_say_they_were_scored_with() -> None:
    assert DEFAULT_MODE in MODES == ("merge", "fill", "replace")
    used = judgments_used(None, "clicks.qrels (abcd1234)", "fill")
    assert used.label == "the dataset's own judgments, with clicks.qrels (abcd1234) where they judge nothing"
    assert (used.mode, used.files, used.judge) == ("fill", ("clicks.qrels (abcd1234)",), None)
    again = judgments_used(used, "more.qrels (00000000)", "replace")
    assert again.label == "more.qrels (00000000) alone" and again.files == ("more.qrels (00000000)",)
