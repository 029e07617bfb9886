"""``[sweep.params]``: template parameters swept with the fusion grid, read once, every mistake named at
its key path before anything connects or is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError
from harness.cli import main
from harness.experiment import Experiment, experiment, identity
from harness.sweep import JointGrid, ParamAxis, SweepContext, SweepSpec, grid, sweep_grid
from tests._support import REPO

SWEPT = """
datasets = ["sample"]
depth = 50

[[arms]]
name = "boosted"
template = '{"size": {{size}}, "query": {"match": {"title": {"query": "{{query}}", "boost": {{boost}}}}}}'
params = { boost = 2.5, unused = 1 }

[[arms]]
name = "knn"
model = "minilm"
template = '{"knn": {"field": "v", "query_vector": {{query_vector}}, "k": {{k}}, "num_candidates": {{num_candidates}}}}'

[[arms]]
name = "other"
template = '{"query": {"match": {"title": "{{query}}"}}}'

[[fused]]
name = "both"
inputs = ["boosted", "knn"]
fusion = "wsum:norm=min-max,weights=0.3/0.7"

[sweep]
tune_on = "kfold:5"
GRID
[sweep.params]
boosted.boost = [1, 2.5, 4]
knn.num_candidates = [50, 200]
"""


def _load(tmp_path: Path, text: str, grid_line: str = "") -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(text.replace("GRID\n", grid_line + "\n"))
    return path


def test_the_param_grid_is_typed_and_joins_the_fusion_grid(tmp_path: Path) -> None:
    exp = experiment(_load(tmp_path, SWEPT, 'grid = "method=rrf,wsum;weights=0.2..0.8/0.3"'))
    params = exp.sweep.params
    assert params is not None
    assert params.axes == (
        ParamAxis("boosted", "boost", (1, 2.5, 4)),
        ParamAxis("knn", "num_candidates", (50, 200)),
    )
    assert params.searches(10) == (3 + 2) * 10  # one search per distinct setting per query
    spec = _grid(exp)
    assert isinstance(spec, JointGrid)
    configs = grid(spec.specs(), SweepContext(("boosted", "knn"), "both", 50))
    assert len(configs) == 3 * 2 * (1 + 3)  # settings x (rrf + wsum at 3 weights)
    assert configs[0].params == {"params": "boosted.boost=1,knn.num_candidates=50", "fusion": "rrf:k=60"}
    assert identity(exp)["sweep.params"] is not None  # another param grid, another run directory


def _grid(exp: Experiment) -> SweepSpec | JointGrid:
    arm = exp.swept_arm
    assert arm is not None and arm.fusion is not None
    return sweep_grid(exp.grid, arm.fusion, exp.sweep.params)


def test_a_param_grid_alone_keeps_the_fused_arms_fusion(tmp_path: Path) -> None:
    exp = experiment(_load(tmp_path, SWEPT))
    spec = _grid(exp)
    assert isinstance(spec, JointGrid) and spec.fusion == SweepSpec.fixed(exp.fused[0].fusion)  # type: ignore[arg-type]
    configs = grid(spec.specs(), SweepContext(("boosted", "knn"), "both", 50))
    assert {c.params["fusion"] for c in configs} == {"wsum:norm=min-max,weights=0.3/0.7"} and len(
        configs
    ) == 6


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("boosted.boost =", "bm25.boost ="),
            "sweep.params.bm25: unknown arm 'bm25': expected an input of the swept arm both",
        ),
        (("boosted.boost =", "other.boost ="), "sweep.params.other: arm 'other': expected an input"),
        (
            ("boosted.boost =", "boosted.bost ="),
            "sweep.params.boosted.bost: unknown param of arm boosted: expected a variable of its template among boost",
        ),
        (("boosted.boost =", "boosted.unused ="), "sweep.params.boosted.unused: unknown param"),
        (("knn.num_candidates =", "knn.size ="), "sweep.params.knn.size: unknown param of arm knn"),
        (("[1, 2.5, 4]", "[]"), "sweep.params.boosted.boost: expected a non-empty list of values, found []"),
        (("[1, 2.5, 4]", "2"), "sweep.params.boosted.boost: expected a non-empty list of values, found 2"),
        (("[1, 2.5, 4]", "[1, 1]"), "sweep.params.boosted.boost: expected distinct values"),
        (("[50, 200]", "[50, 2.5]"), "sweep.params.knn.num_candidates: expected positive integers"),
        (("[50, 200]", "[20, 200]"), "sweep.params.knn.num_candidates: 20 is below k=50"),
        (("boosted.boost =", '"boosted.boost" ='), "sweep.params.boosted.boost: unknown arm 'boosted.boost'"),
        (("[sweep.params]\n", "[sweep.params]\n[sweep.params.boosted]\n"), "sweep.params.boosted"),
        (
            (
                "[sweep.params]\nboosted.boost = [1, 2.5, 4]\nknn.num_candidates = [50, 200]\n",
                "params = {}\n",
            ),
            "sweep.params: expected ARM.PARAM",
        ),
    ],
)
def test_each_param_grid_mistake_is_named_at_its_key_path(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in SWEPT
    path = _load(tmp_path, SWEPT.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        experiment(path)
    assert str(err.value).startswith(f"{path}: "), err.value
    assert message in str(err.value), err.value


def test_a_bad_param_grid_stops_the_cli_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _load(tmp_path, SWEPT.replace("boosted.boost =", "boosted.bost =", 1))
    out = tmp_path / "out"
    args = [
        "run",
        "--experiment",
        str(path),
        "--output",
        str(out),
        "--url",
        "http://127.0.0.1:9",
        "--no-progress",
    ]
    assert main(args) == 2
    assert "sweep.params.boosted.bost: unknown param" in capsys.readouterr().err
    assert not out.exists()


def test_the_shipped_sweep_example_reads() -> None:
    exp = experiment(REPO / "examples" / "experiment-sweep.toml")
    params, swept = exp.sweep.params, exp.swept_arm
    assert params is not None and swept is not None and swept.name == "fused"
    assert [str(a) for a in params.axes] == [
        "boosted-bm25.title_boost=1,2,4",
        "boosted-bm25.title_match_weight=1,1.5",
        "knn.num_candidates=100,1000",
    ]
