"""Experiment files: read once, every mistake named at FILE: key.path, before anything connects; files
written before the tables (top-level depth, datasets, model ...) keep working."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError
from harness.experiment import EXPERIMENT_MODE, experiment, identity
from harness.strategies import FusedArm
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
    exp = experiment(_write(tmp_path, GOOD), flags={"output.dir": (str(tmp_path / "out"), "--output out")})
    assert exp.label == EXPERIMENT_MODE and exp.search.depth == 50 and exp.datasets == ("sample",)
    boosted, knn = exp.arms
    assert boosted.template("elasticsearch").source == str((tmp_path / "t" / "boosted.mustache").resolve())
    assert boosted.params == {"boost": 2.5} and boosted.model is None and not boosted.needs_vector
    assert (knn.index, knn.id_field, knn.model, knn.needs_vector) == ("my-index", "sku", "minilm", True)
    assert (boosted.compare_to, knn.compare_to) == ((), ("boosted",))  # the first arm is the baseline
    (fused,) = exp.fused
    assert isinstance(fused, FusedArm) and fused.inputs == ("boosted", "knn")
    assert str(fused.fusion) == "wsum:norm=min-max,weights=0.3/0.7" and fused.compare_to == ("boosted",)
    assert exp.output.dir == tmp_path / "out"


def test_an_arm_without_a_model_embeds_with_the_experiments(tmp_path: Path) -> None:
    exp = experiment(
        _write(tmp_path, GOOD.replace('model = "minilm"\n', "")), settings=["embedding.model=e5"]
    )
    assert exp.arms[1].model == "e5" and exp.arms[0].model is None  # (the lexical arm embeds nothing)


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
        (("params = { boost = 2.5 }", "params = { size = 2 }"), "arms[0].params: size: the harness fills"),
        (("depth = 50", "depth = 5"), "exp.toml: depth: expected 10..1000, found 5"),
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
            "exp.toml: datasets: expected datasets or queries + qrels, found both",
        ),
        (
            ('datasets = ["sample"]', 'queries = "q.tsv"\nqrels = "j.csv"'),
            "arms[0].index: expected the index to search",
        ),
        (("depth = 50", "depth = true"), "exp.toml: depth: expected an integer, found bool True"),
        (("depth = 50", "depth = [1"), "exp.toml: expected a TOML experiment file, it does not parse"),
        (
            ("depth = 50", 'depth = 50\n[sweep]\narm = "nope"\ntune_on = "kfold"'),
            "sweep.arm: unknown fused arm 'nope'",
        ),
        (
            ("depth = 50", 'depth = 50\n[sweep]\ngrid = "method=rrf"'),
            "exp.toml: sweep.grid: needs sweep.tune_on train or kfold[:K]",
        ),
        (("depth = 50", 'depth = 50\n[sweep]\ntune_on = "kfold:1"'), "kfold"),
    ],
)
def test_each_mistake_is_named_at_its_key_path(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    old, new = change
    assert old in GOOD
    path = _write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        experiment(path)
    assert str(err.value).startswith(str(path)), err.value
    assert message in str(err.value), err.value


def test_both_an_inline_template_and_a_file_is_refused(tmp_path: Path) -> None:
    text = GOOD.replace(
        'template_file = "t/boosted.mustache"', 'template_file = "t/boosted.mustache"\ntemplate = "{}"'
    )
    with pytest.raises(ConfigError, match=r"arms\[0\]\.template: expected exactly one of template"):
        experiment(_write(tmp_path, text))


def test_the_shipped_example_reads() -> None:
    exp = experiment(REPO / "examples" / "experiment.toml")
    assert [a.name for a in exp.arms] == ["boosted-bm25", "knn"] and exp.fused[0].inputs == (
        "boosted-bm25",
        "knn",
    )
    assert exp.datasets == ("sample",) and exp.arms[1].model == "minilm"
    assert (
        exp.output.records == ("jsonl",) and exp.sweep.tune_on == "kfold:5" and exp.swept_arm == exp.fused[0]
    )


def test_a_file_takes_every_capability_from_its_tables(tmp_path: Path) -> None:
    text = (
        GOOD
        + '\n[load]\nenabled = true\niterations = 1\n[expansion]\nmethod = "hyde"\n[rerank]\nmodel = "minilm@20"\n'
    )
    exp = experiment(_write(tmp_path, text))
    assert exp.load_options is not None and exp.load_options.iterations == 1
    assert exp.expansion.method == "hyde" and exp.rerank_spec is not None and exp.rerank_spec.depth == 20


def test_the_shipped_mode_example_is_the_readmes_first_command_tuned() -> None:
    exp = experiment(REPO / "examples" / "experiment-mode.toml")
    flags = experiment(
        values={
            "mode": "hybrid",
            "data.datasets": ["sample"],
            "sweep.tune_on": "kfold:5",
            "output.records": "jsonl",
        }
    )
    assert identity(exp) == identity(flags) and exp.load_options is None and exp.ann.recall
