"""``--tune-on`` sweeps end to end on the real engines and real SciFact data (300-document cuts).

* k-fold on a dataset without a train split (on both engines): the reported score is recomputed here from the arms'
  checkpointed runs, fold by fold (fuse the held-out queries with the fold's choice, score them), and it
  is not the in-sample maximum of the grid, recomputed here too;
* a train split (Elasticsearch): chosen on train, scored on test, the test oracle reported apart.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pytest

from base import read_json
from harness.cli import main
from harness.eval import FusionSpec, evaluate, fuse, top_k
from harness.results import RunResults, load_per_query, schema
from harness.run import ArmRun
from harness.sweep import SweepSpec, kfold_split
from indexer.data import load_dataset
from tests._support import scifact_subset

GRID = "method=wsum,combsum,rrf;norm=min-max,zmuv;weights=0.0..1.0/0.1;k=10,60"
NDCG = "ndcg@10"


@pytest.fixture(scope="module")
def no_train(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Test queries only: a dataset without a train split, like R2MED."""
    return scifact_subset(
        tmp_path_factory.mktemp("sweep") / "sweep-test-only", n_docs=300, n_test=40, n_train=0
    )


@pytest.fixture(scope="module")
def with_train(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("sweep") / "sweep-train", n_docs=300, n_test=40, n_train=40)


def _run(url: str, data: Path, out: Path, *extra: str) -> None:
    args = ["run", "hybrid", "--dataset", str(data), "--output", str(out), "--url", url, "--no-ann-recall"]
    assert main([*args, "--records", "jsonl", "--no-progress", "--sweep-fusion", GRID, *extra]) == 0


def _inputs(out: Path, name: str, folder: str = "test") -> dict[str, dict[str, dict[str, float]]]:
    """The lexical and vector runs exactly as searched (the checkpoints), in the hybrid's input order."""
    ckpt = out / "arms" / name / folder
    return {arm: ArmRun.from_dict(read_json(ckpt / f"{arm}.json")).run for arm in ("lexical", "vector")}


def _score(
    qrels: dict[str, dict[str, int]], runs: dict, spec: FusionSpec, qids: list[str]
) -> dict[str, float]:
    held = {arm: {q: run.get(q, {}) for q in qids} for arm, run in runs.items()}
    fused = top_k(fuse(held, spec), 100)
    return evaluate({q: qrels[q] for q in qids}, fused, [NDCG]).per_query[NDCG]


def test_kfold_reports_the_held_out_score_not_the_in_sample_maximum(
    engine_url: str, no_train: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kfold"
    _run(engine_url, no_train, out, "--tune-on", "kfold:4", "--seed", "7")
    printed = capsys.readouterr()
    configs = SweepSpec.parse(GRID).configurations(2)
    cost = f"sweep of hybrid on sweep-test-only: {len(configs)} configurations x 40 queries = {len(configs) * 40:,}"
    assert (
        cost in printed.err
        and "(kfold:4: each fold chooses on ~30 queries and scores the other ~10)" in printed.err
    )
    assert "sweep of hybrid on sweep-test-only (kfold:4): held-out ndcg@10" in printed.out

    results = RunResults.load(out)
    data = results.datasets["sweep-test-only"]
    sweep, tuning = data.sweep, results.manifest.tuning["sweep-test-only"]
    assert sweep is not None and sweep.choices == tuning and tuning.tune_on == "kfold:4" and tuning.seed == 7
    assert tuning.configurations == len(configs) and [f.fold for f in tuning.folds] == [1, 2, 3, 4]
    assert tuning.grid == GRID and tuning.every_value == SweepSpec.parse(GRID).canonical()

    # recomputed here, fold by fold, from the searched runs: the seeded folds, each with its recorded choice
    ds = load_dataset(str(no_train))
    runs = _inputs(out, "sweep-test-only")
    per_query: dict[str, float] = {}
    for fold, qids in zip(tuning.folds, kfold_split(sorted(ds.queries), 4, seed=7), strict=True):
        scores = _score(ds.qrels, runs, FusionSpec.parse(fold.chosen["fusion"]), list(qids))
        assert fold.held_out_queries == len(qids) and fold.choose_queries == 40 - len(qids)
        assert fold.held_out_score == pytest.approx(math.fsum(scores.values()) / len(qids), abs=1e-6)
        per_query.update(scores)
    held_out = math.fsum(per_query.values()) / len(per_query)
    assert data.arms["hybrid"].metrics[NDCG] == pytest.approx(held_out, abs=1e-6) == sweep.held_out
    assert data.arms["hybrid"].ci95[NDCG] == sweep.ci95
    written = {r.qid: r.metrics[NDCG] for r in load_per_query(out) if r.arm == "hybrid"}
    assert written == pytest.approx(per_query, abs=1e-6)

    # the in-sample maximum of the grid, recomputed: reported apart, and above the held-out score
    qids = sorted(ds.queries)
    in_sample = {str(c): math.fsum(_score(ds.qrels, runs, c, qids).values()) / len(qids) for c in configs}
    top = max(in_sample.values())
    assert sweep.in_sample_best == pytest.approx(top, abs=1e-6)
    assert in_sample[sweep.in_sample_config["fusion"]] == pytest.approx(top, abs=1e-9)
    assert sweep.held_out < top - 1e-4, (sweep.held_out, top)

    # the held-out per-query scores are the ones the paired tests compare
    tests = {(c.arm_a, c.arm_b): c for c in data.significance}
    assert tests[("lexical", "hybrid")].mean_b == pytest.approx(held_out, abs=1e-6)
    assert tests[("vector", "hybrid")].mean_b == pytest.approx(held_out, abs=1e-6)
    data_json = json.loads((out / "results.json").read_text())
    assert list(jsonschema.Draft202012Validator(schema()).iter_errors(data_json)) == []
    assert data_json["manifest"]["tuning"]["sweep-test-only"]["folds"][0]["chosen"]["fusion"]
    report = (out / "report.md").read_text()
    assert "held-out (reported)" in report and "in-sample best (optimistic)" in report


def test_train_split_chooses_on_train_and_reports_test(es_url: str, with_train: Path, tmp_path: Path) -> None:
    out = tmp_path / "train"
    _run(es_url, with_train, out, "--tune-on", "train")
    results = RunResults.load(out)
    data = results.datasets["sweep-train"]
    sweep = data.sweep
    assert sweep is not None
    (fold,) = sweep.choices.folds
    assert (fold.choose_queries, fold.held_out_queries) == (40, 40) and sweep.choices.tune_on == "train"
    chosen = FusionSpec.parse(fold.chosen["fusion"])
    assert results.manifest.fusion_tuned["sweep-train"] == chosen == data.fusion

    # chosen on train: the best of the grid on the train runs (first in grid order on ties)
    train, test = load_dataset(str(with_train), split="train"), load_dataset(str(with_train))
    configs = SweepSpec.parse(GRID).configurations(2)
    train_runs, test_runs = _inputs(out, "sweep-train", "tune-train"), _inputs(out, "sweep-train")
    on_train = [
        math.fsum(_score(train.qrels, train_runs, c, sorted(train.queries)).values()) / 40 for c in configs
    ]
    assert chosen == configs[on_train.index(max(on_train))]
    assert fold.choose_score == pytest.approx(max(on_train), abs=1e-6)

    # reported on test with that choice; the oracle (best on test) is reported apart as the in-sample best
    on_test = {
        str(c): math.fsum(_score(test.qrels, test_runs, c, sorted(test.queries)).values()) / 40
        for c in configs
    }
    assert data.arms["hybrid"].metrics[NDCG] == pytest.approx(on_test[str(chosen)], abs=1e-6)
    assert sweep.in_sample_best == pytest.approx(max(on_test.values()), abs=1e-6)
    assert sweep.held_out <= sweep.in_sample_best
