"""The ``params`` provider: settings per arm, their product, and a choice that selects searched runs."""

from __future__ import annotations

import pytest

from base import ConfigError
from harness.sweep import (
    PROVIDERS,
    ParamAxis,
    ParamGrid,
    SweepContext,
    SweepSpec,
    grid,
    variant_key,
)

GRID = ParamGrid(
    (
        ParamAxis("bm25", "boost", (1, 2)),
        ParamAxis("bm25", "fields", (["title"], ["title", "text"])),
        ParamAxis("knn", "num_candidates", (100, 400)),
    )
)
CTX = SweepContext(("bm25", "knn"), "fused", 10)


def test_an_arm_is_searched_once_per_setting_and_the_points_are_their_product() -> None:
    assert GRID.arms == ("bm25", "knn")
    assert len(GRID.settings("bm25")) == 4 and GRID.settings("knn") == (
        (("num_candidates", 100),),
        (("num_candidates", 400),),
    )
    assert GRID.searches(30) == (4 + 2) * 30
    points = GRID.points()
    assert len(points) == 8 and len({p.label for p in points}) == 8
    assert points[0].label == 'bm25.boost=1,bm25.fields=["title"],knn.num_candidates=100'
    assert points[0].params_of("knn") == {"num_candidates": 100}


def test_a_choice_selects_each_arms_setting_run_for_the_queries_it_is_given() -> None:
    point = GRID.points()[-1]
    runs = {
        "bm25": {"q1": {"a": 1.0}},  # a fold: only q1 of the arm's queries
        "knn": {"q1": {"b": 1.0}},
        variant_key("bm25", point.settings[0][1]): {"q1": {"x": 3.0}, "q2": {"y": 1.0}},
        variant_key("knn", point.settings[1][1]): {"q1": {"z": 2.0}, "q2": {"w": 1.0}},
    }
    out = PROVIDERS["params"].apply(point, CTX, runs)
    assert out == {"bm25": {"q1": {"x": 3.0}}, "knn": {"q1": {"z": 2.0}}}
    del runs[variant_key("knn", point.settings[1][1])]
    with pytest.raises(
        ConfigError, match=r"the run of knn\{num_candidates=400\} is not among the searched runs"
    ):
        PROVIDERS["params"].apply(point, CTX, runs)


def test_params_come_before_fusion_in_the_joint_grid() -> None:
    configs = grid({"fusion": SweepSpec.parse("method=rrf;k=10,60"), "params": GRID}, CTX)
    assert len(configs) == 8 * 2
    assert [c.provider for c in configs[0].choices] == ["params", "fusion"]


def test_params_of_an_arm_the_swept_arm_does_not_fuse_are_refused() -> None:
    with pytest.raises(ConfigError, match="swept params of arm 'knn': expected an input of fused"):
        grid({"params": GRID}, SweepContext(("bm25", "other"), "fused", 10))
