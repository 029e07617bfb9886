"""Experiment files: read once, every mistake named at FILE: key.path, before anything connects."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.experiment import load_experiment
from harness.run import EXPERIMENT_MODE
from harness.strategies import FusedArm
from indexer import ConfigError
from tests._support import REPO

GOOD = """
datasets = ["sample"]
depth = 50

[[arms]]
name = "boosted"
template_file = "t/boosted.mustache"
params = { boost = 2.5 }

[[arms]]
name = "knn"
model = "minilm"
index = "my-index"
id_field = "sku"
template = '{"knn": {"field": "v", "query_vector": {{query_vector}}, "k": {{k}}}}'

[[fused]]
name = "both"
inputs = ["boosted", "knn"]
fusion = "wsum:norm=min-max,weights=0.3/0.7"
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "t").mkdir(exist_ok=True)
    (tmp_path / "t" / "boosted.mustache").write_text(
        '{"size": {{size}}, "query": {"match": {"title": {"query": "{{query}}", "boost": {{boost}}}}}}'
    )
    path = tmp_path / "exp.toml"
    path.write_text(text)
    return path


def test_a_good_file_is_typed_with_paths_relative_to_it(tmp_path: Path) -> None:
    exp = load_experiment(_write(tmp_path, GOOD), output=tmp_path / "out")
    assert exp.run.mode == EXPERIMENT_MODE and exp.run.depth == 50 and exp.run.datasets == ("sample",)
    boosted, knn = exp.arms
    assert boosted.template("elasticsearch").source == str((tmp_path / "t" / "boosted.mustache").resolve())
    assert boosted.params == {"boost": 2.5} and boosted.model is None and not boosted.needs_vector
    assert (knn.index, knn.id_field, knn.model, knn.needs_vector) == ("my-index", "sku", "minilm", True)
    assert (boosted.compare_to, knn.compare_to) == ((), ("boosted",))  # the first arm is the baseline
    (fused,) = exp.fused
    assert isinstance(fused, FusedArm) and fused.inputs == ("boosted", "knn")
    assert str(fused.fusion) == "wsum:norm=min-max,weights=0.3/0.7" and fused.compare_to == ("boosted",)
    assert exp.run.output == tmp_path / "out"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ('inputs = ["boosted", "knn"]', 'inputs = ["boosted", "bm25"]'),
            "fused[0].inputs: unknown arm 'bm25'",
        ),
        (
            ("{{query_vector}}", "{{query_vectr}}"),
            "arms[1].template: unknown template variable(s) query_vectr",
        ),
        (('model = "minilm"\n', ""), "arms[1].model: the template uses {{query_vector}}: expected a model"),
        (("params = { boost = 2.5 }", "params = { size = 2 }"), "arms[0].params: size: the harness fills"),
        (("depth = 50", "depth = 5"), "expected --depth between 10 and 1000, found 5"),
        (("depth = 50", "depht = 50"), "exp.toml: depht: unknown key"),
        (("weights=0.3/0.7", "weights=0.2/0.3/0.5"), "fused[0].fusion: expected 2 weights"),
        (
            ('template_file = "t/boosted.mustache"', 'template_file = "t/nope.mustache"'),
            "arms[0].template_file: expected a template file",
        ),
        (
            ('template_file = "t/boosted.mustache"', 'template_file = "builtin:bm42"'),
            "arms[0].template_file: expected a built-in template",
        ),
        (('name = "knn"', 'name = "boosted"'), "the arm name 'boosted' is used twice"),
        (
            ('datasets = ["sample"]', 'datasets = ["sample"]\nqueries = "q.tsv"'),
            "datasets: expected datasets or queries + qrels, found both",
        ),
        (
            ('datasets = ["sample"]', 'queries = "q.tsv"\nqrels = "j.csv"'),
            "arms[0].index: expected the index to search",
        ),
        (("depth = 50", "depth = true"), "depth: expected a number, found True"),
        (("depth = 50", "depth = [1"), "exp.toml: expected a TOML experiment file, it does not parse"),
        (
            ("depth = 50", 'depth = 50\n[sweep]\narm = "nope"\ntune_on = "kfold"'),
            "sweep.arm: unknown fused arm 'nope'",
        ),
        (
            ("depth = 50", 'depth = 50\n[sweep]\ngrid = "method=rrf"'),
            "sweep.tune_on: expected how to hold queries out",
        ),
        (("depth = 50", 'depth = 50\n[sweep]\ntune_on = "kfold:1"'), "kfold"),
    ],
)
def test_each_mistake_is_named_at_its_key_path(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    old, new = change
    assert old in GOOD
    path = _write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load_experiment(path)
    assert str(err.value).startswith(str(path)), err.value
    assert message in str(err.value), err.value


def test_both_an_inline_template_and_a_file_is_refused(tmp_path: Path) -> None:
    text = GOOD.replace(
        'template_file = "t/boosted.mustache"', 'template_file = "t/boosted.mustache"\ntemplate = "{}"'
    )
    with pytest.raises(ConfigError, match=r"arms\[0\]\.template: expected exactly one of template"):
        load_experiment(_write(tmp_path, text))


def test_the_shipped_example_reads() -> None:
    exp = load_experiment(REPO / "examples" / "experiment.toml")
    assert [a.name for a in exp.arms] == ["boosted-bm25", "knn"] and exp.fused[0].inputs == (
        "boosted-bm25",
        "knn",
    )
    assert exp.run.datasets == ("sample",) and exp.arms[1].model == "minilm"
