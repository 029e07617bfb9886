"""The fusion grid's grammar (sweep.grid, --sweep-fusion): parsed once into a SweepSpec, expanded per method, errors that say what was expected."""

from __future__ import annotations

import pytest

from base import ConfigError
from harness.eval import FusionSpec
from harness.sweep import NAMED_GRIDS, SweepSpec


def test_a_joint_grid_is_the_union_over_methods_of_their_own_axes() -> None:
    spec = SweepSpec.parse("method=rrf,wsum,combmnz; norm=min-max,zmuv,sum; weights=0.1..0.9/0.1")
    assert spec.methods == ("rrf", "wsum", "combmnz") and spec.norms == ("min-max", "zmuv", "sum")
    assert spec.weights == tuple((round(0.1 * i, 10),) for i in range(1, 10))
    configs = spec.configurations(2)
    # rrf takes no norm and no weights (k default); wsum 3 norms x 9 weights; combmnz 3 norms
    assert len(configs) == 1 + 27 + 3
    labels = [str(c) for c in configs]
    assert labels[0] == "rrf:k=60" and "wsum:norm=zmuv,weights=0.3/0.7" in labels
    assert "combmnz:norm=sum" in labels and len(set(labels)) == len(labels)
    assert all(isinstance(c, FusionSpec) for c in configs)


def test_canonical_text_round_trips() -> None:
    spec = SweepSpec.parse("method=wsum,rrf; weights=0.2/0.8,0.5; k=10..30/10; norm=none")
    assert str(spec) == "method=wsum,rrf;weights=0.2/0.8,0.5;k=10..30/10;norm=none"  # as given
    assert spec.canonical() == "method=wsum,rrf;norm=none;weights=0.2/0.8,0.5;k=10,20,30"
    assert SweepSpec.parse(str(spec)) == spec == SweepSpec.parse(spec.canonical())
    assert [str(c) for c in spec.configurations(2)] == [
        "wsum:norm=none,weights=0.2/0.8",
        "wsum:norm=none,weights=0.5/0.5",
        "rrf:k=10",
        "rrf:k=20",
        "rrf:k=30",
    ]


def test_named_grids() -> None:
    for name, text in NAMED_GRIDS.items():
        spec = SweepSpec.parse(name)
        assert str(spec) == name and spec == SweepSpec.parse(text)
        assert spec.canonical() == SweepSpec.parse(text).canonical()
    assert len(SweepSpec.parse("default").configurations(2)) == 36
    assert len(SweepSpec.parse("rrf").configurations(2)) == 10


def test_the_grid_of_a_fusion_method_alone() -> None:
    wsum = SweepSpec.for_method(FusionSpec.parse("wsum:norm=zmuv,weights=0.5/0.5"))
    configs = [str(c) for c in wsum.configurations(2)]
    assert len(configs) == 11 and configs[0] == "wsum:norm=zmuv,weights=0.0/1.0"
    assert str(SweepSpec.for_method(FusionSpec.parse("rrf"))) == "rrf"
    assert SweepSpec.for_method(FusionSpec.parse("combsum")).methods == ("wsum",)


def test_all_zero_weights_are_left_out_and_three_arms_take_explicit_weights() -> None:
    assert [str(c) for c in SweepSpec.parse("method=wsum;weights=0,1").configurations(2)] == [
        "wsum:norm=min-max,weights=0.0/1.0",
        "wsum:norm=min-max,weights=1.0/0.0",
    ]
    three = SweepSpec.parse("method=wsum;weights=0.2/0.3/0.5").configurations(3)
    assert three[0].weights == (0.2, 0.3, 0.5)


BAD = [
    ("", "expected a grid name (default, weights, rrf) or a method axis"),
    ("norm=zmuv", "expected a grid name (default, weights, rrf) or a method axis, e.g. 'method=rrf,wsum'"),
    ("method", "expected AXIS=VALUE[,VALUE...] (axes method, norm, weights, k), found 'method'"),
    ("method=rrf;nrom=zmuv", "unknown axis 'nrom'; expected one of method, norm, weights, k"),
    ("method=rrf;method=wsum", "axis 'method' is given twice"),
    ("method=nope", "unknown method 'nope'; expected among rrf, isr"),
    ("method=combsum;norm=cube", "unknown norm 'cube'; expected among none, min-max"),
    ("method=rrf;weights=0.5", "no listed method takes weights; methods that do: wsum, wmnz"),
    ("method=rrf;norm=zmuv", "no listed method takes norm; methods that do: combsum"),
    ("method=wsum;k=10", "no listed method takes k; methods that do: rrf"),
    ("method=wsum", "wsum needs a weights axis, e.g. weights=0.1..0.9/0.1"),
    ("method=wsum;weights=0.1..0.9", "expected a range as LOW..HIGH/STEP (e.g. 0.1..0.9/0.1), found '0.1..0.9'"),
    ("method=wsum;weights=0.9..0.1/0.1", "expected LOW <= HIGH and a positive STEP in '0.9..0.1/0.1'"),
    ("method=wsum;weights=0..1/0", "expected LOW <= HIGH and a positive STEP"),
    ("method=wsum;weights=a/b", "expected a number for a weight, found 'a'"),
    ("method=rrf;k=0", "expected k as positive integers, found '0'"),
    ("method=rrf;k=1..100000/1", "has 100000 values; expected at most 5000"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), BAD, ids=[t or "empty" for t, _ in BAD])
def test_bad_grids_say_what_was_expected_and_found(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        SweepSpec.parse(text)
    assert message in str(info.value) and str(info.value).startswith(f"grid {text.strip()!r}: ")


@pytest.mark.parametrize(
    ("text", "arms", "message"),
    [
        ("method=wsum;weights=0.2/0.3/0.5", 2, "expected 2 weights per value (one per fused arm, as a/b/...), found 3"),
        ("method=wsum;weights=0.5", 3, "expected 3 weights per value"),
        ("method=wsum;weights=1.5", 2, "expected a single weight between 0 and 1 (the first arm's share), found 1.5"),
    ],
)  # fmt: skip
def test_weights_that_do_not_fit_the_arms(text: str, arms: int, message: str) -> None:
    spec = SweepSpec.parse(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        spec.configurations(arms)
