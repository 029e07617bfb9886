"""``[sweep.params]`` end to end on the real Elasticsearch, on a cut of the real SciFact (120 abstracts,
20 test claims): a grid over template parameters alone and jointly with the fusion grid. Each arm is
searched once per distinct setting (counted by the run and by its checkpoints), the reported score is
the pooled held-out evaluation recomputed from those checkpoints, not the in-sample maximum, and a
second run of the same command searches nothing."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from base import read_json
from harness.cli import main
from harness.eval import PRIMARY_MEASURE, FusionSpec, evaluate, fuse, top_k
from harness.results import RunResults, load_ranking, rank_run, trec_path
from harness.sweep import Setting, kfold_folds, kfold_split
from indexer import load_dataset
from tests._support import scifact_subset

DATASET = "experiment-subset"
QUERIES = 20

PARAM_SWEEP = """
datasets = ["{cut}"]
depth = 20

[[arms]]
name = "lexical"
template = '''{{"size": {{{{size}}}}, "query": {{"multi_match": {{"query": "{{{{query}}}}",
  "fields": ["title^{{{{title_boost}}}}", "text"]}}}}}}'''
params = {{ title_boost = 1 }}

[[arms]]
name = "knn"
model = "minilm"
template = '''{{"size": {{{{size}}}}, "_source": false, "knn": {{"field": "{{{{vector_field}}}}",
  "query_vector": {{{{query_vector}}}}, "k": {{{{k}}}}, "num_candidates": {{{{num_candidates}}}}}}}}'''

[[fused]]
name = "fused"
inputs = ["lexical", "knn"]
fusion = "{fusion}"

[sweep]
tune_on = "kfold:4"
{grid}
[sweep.params]
{params}
"""


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("exp") / DATASET, n_docs=120, n_test=QUERIES, n_train=0)


def _run(es_url: str, cut: Path, folder: Path, grid: str, params: str, fusion: str = "rrf") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exp = folder / "exp.toml"
    exp.write_text(PARAM_SWEEP.format(cut=cut, grid=grid, params=params, fusion=fusion))
    out = folder / "out"
    args = ["run", "--experiment", str(exp), "--output", str(out), "--url", es_url, "--no-progress"]
    assert main([*args, "--records", "jsonl"]) == 0
    return out


def _checkpoints(out: Path) -> dict[tuple[str, Setting], dict[str, dict[str, float]]]:
    """{(arm, setting): run} read back from the run directory's sweep checkpoints."""
    found = {}
    for path in sorted((out / "sweep" / DATASET / "test").glob("*.json")):
        data = read_json(path)
        found[(data["arm"], tuple(data["params"].items()))] = data["run"]
    return found


def _label_setting(label: str) -> dict[str, dict[str, str]]:
    """``lexical.title_boost=4,knn.num_candidates=80`` -> {arm: {param: value text}}."""
    out: dict[str, dict[str, str]] = {}
    for part in label.split(","):
        key, _, value = part.partition("=")
        arm, _, param = key.partition(".")
        out.setdefault(arm, {})[param] = value
    return out


def _run_of(
    label: str, fusion: str, ckpt: dict[tuple[str, Setting], dict[str, dict[str, float]]], out: Path
) -> dict:
    """A configuration's fused run, rebuilt from the checkpoints (an arm not swept: its TREC file's ranks,
    which rank fusion reads exactly)."""
    wanted = _label_setting(label)
    runs = {
        arm: rank_run(load_ranking(trec_path(out, DATASET, arm)))
        for arm in ("knn", "lexical")
        if arm not in wanted
    }
    for (arm, setting), run in ckpt.items():
        if {p: str(v) for p, v in setting} == wanted.get(arm):
            runs[arm] = run
    assert sorted(runs) == ["knn", "lexical"]
    return top_k(fuse({"lexical": runs["lexical"], "knn": runs["knn"]}, FusionSpec.parse(fusion)), 20)


def _check_held_out(out: Path, cut: Path) -> tuple[float, float]:
    """The reported score against the pooled held-out score recomputed from the checkpoints."""
    results = RunResults.load(out)
    ds, qrels = results.datasets[DATASET], load_dataset(str(cut)).qrels
    sweep = ds.sweep
    assert sweep is not None and sweep.arm == "fused" and results.manifest.tuning[DATASET] == sweep.choices
    ckpt = _checkpoints(out)
    folds = kfold_folds(kfold_split(sorted(qrels), 4, 42))
    pooled: dict[str, float] = {}
    for recorded, (_, held) in zip(sweep.choices.folds, folds, strict=True):
        run = _run_of(recorded.chosen["params"], recorded.chosen["fusion"], ckpt, out)
        judged = {q: qrels[q] for q in held}
        scores = evaluate(judged, {q: run.get(q, {}) for q in held}, [PRIMARY_MEASURE]).per_query
        pooled.update(scores[PRIMARY_MEASURE.key])
    held_out = sum(pooled.values()) / len(pooled)
    assert len(pooled) == QUERIES
    assert sweep.held_out == pytest.approx(held_out, abs=1e-4) == ds.arms["fused"].metrics["ndcg@10"]
    return sweep.held_out, sweep.in_sample_best


def _printed(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()  # the run's lines go to stdout (its console), errors to stderr
    return captured.out + captured.err


def _searches_sent(err: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"/test: ([\d,]+) searches sent", err) if n]


def test_a_param_grid_alone_searches_each_setting_once_and_reports_held_out(
    es_url: str, cut: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(es_url, cut, tmp_path, "", "lexical.title_boost = [0.2, 1, 5]")
    err = _printed(capsys)
    # said before any work: configurations x queries, and the searches of the param grid
    assert "3 configurations x 20 queries = 60 rankings" in err
    assert "the param grid searches 3 arm settings x 20 queries = 60 searches" in err
    assert _searches_sent(err) == [3 * QUERIES]
    ckpt = _checkpoints(out)
    assert sorted(s for _, s in ckpt) == [(("title_boost", v),) for v in (0.2, 1, 5)]
    assert sum(len(run) for run in ckpt.values()) == 3 * QUERIES  # one search per setting per query
    assert len({str(sorted(r.items())) for r in ckpt.values()}) == 3  # the boosts reached the engine
    results = RunResults.load(out)
    sweep = results.datasets[DATASET].sweep
    assert sweep is not None and sweep.choices.configurations == 3
    assert {f.chosen["fusion"] for f in sweep.choices.folds} == {"rrf:k=60"}  # the arm's own, unswept
    assert all(f.chosen["params"].startswith("lexical.title_boost=") for f in sweep.choices.folds)
    _check_held_out(out, cut)


def test_a_param_grid_with_the_fusion_grid_is_honest_and_resumes_without_searching(
    es_url: str, cut: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = 'grid = "method=rrf,wsum;norm=min-max;weights=0.2..0.8/0.3"'
    params = "lexical.title_boost = [0.2, 1, 5]\nknn.num_candidates = [20, 200]"
    out = _run(es_url, cut, tmp_path, grid, params, "wsum:norm=min-max,weights=0.5/0.5")
    err = _printed(capsys)
    configs = 3 * 2 * (1 + 3)  # settings x (rrf + wsum at 3 weights)
    assert f"{configs} configurations x 20 queries = {configs * QUERIES} rankings" in err
    assert "the param grid searches 5 arm settings x 20 queries = 100 searches" in err
    assert _searches_sent(err) == [5 * QUERIES]
    assert sum(len(run) for run in _checkpoints(out).values()) == 5 * QUERIES
    held_out, in_sample = _check_held_out(out, cut)
    assert (
        held_out != in_sample
    )  # 4 folds of 5 queries: the per-fold choice does not reach the in-sample best
    sweep = RunResults.load(out).datasets[DATASET].sweep
    assert sweep is not None and sweep.choices.configurations == configs
    every = [
        (p, f)
        for p, f in itertools.product(
            [f"lexical.title_boost={b},knn.num_candidates={n}" for b in ("0.2", "1", "5") for n in (20, 200)],
            ["rrf:k=60"] + [f"wsum:norm=min-max,weights={w}/{round(1 - w, 10):g}" for w in (0.2, 0.5, 0.8)],
        )
    ]
    qrels = load_dataset(str(cut)).qrels
    means = {
        (p, f): evaluate(qrels, _run_of(p, f, _checkpoints(out), out), [PRIMARY_MEASURE]).means[
            PRIMARY_MEASURE.key
        ]
        for p, f in every
    }
    assert sweep.in_sample_best == pytest.approx(max(means.values()), abs=1e-4)
    # the same command again: every setting from its checkpoint, nothing searched, the same figures
    _run(es_url, cut, tmp_path, grid, params, "wsum:norm=min-max,weights=0.5/0.5")
    again = _printed(capsys)
    assert _searches_sent(again) == [0] and "5 settings from checkpoints" in again
    assert RunResults.load(out).datasets[DATASET].sweep == sweep


def test_a_param_grid_on_a_train_split_searches_both_splits_once_and_scores_test(
    es_url: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = scifact_subset(
        tmp_path_factory.mktemp("exp-train") / "exp-train", n_docs=120, n_test=12, n_train=12
    )
    text = PARAM_SWEEP.format(cut=data, grid="", params="lexical.title_boost = [0.2, 5]", fusion="rrf")
    (tmp_path / "exp.toml").write_text(text.replace('tune_on = "kfold:4"', 'tune_on = "train"'))
    out = tmp_path / "out"
    args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--output", str(out), "--url", es_url]
    assert main([*args, "--no-progress", "--records", "jsonl"]) == 0
    printed = _printed(capsys)
    assert "the param grid searches 2 arm settings x 24 queries = 48 searches" in printed
    for split in ("test", "train"):  # each setting searched once on each split's 12 queries
        files = sorted((out / "sweep" / "exp-train" / split).glob("*.json"))
        assert len(files) == 2 and all(len(read_json(f)["run"]) == 12 for f in files), split
    ds = RunResults.load(out).datasets["exp-train"]
    assert ds.sweep is not None
    (fold,) = ds.sweep.choices.folds  # chosen on the 12 train queries, scored on the 12 test ones
    assert (fold.choose_queries, fold.held_out_queries) == (12, 12)
    assert ds.sweep.held_out == ds.arms["fused"].metrics["ndcg@10"] == fold.held_out_score
