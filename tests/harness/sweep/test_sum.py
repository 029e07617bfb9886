"""The in-engine sum's weights as a provider of the one sweep: the choice it makes on some queries is the
choice the sum's own tuner makes there, and k-fold searches each fold with weights chosen without it."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from harness.eval import tune_sum_weights
from harness.run import ArmRun
from harness.sweep import (
    PROVIDERS,
    SumGrid,
    SweepContext,
    TuneOn,
    choose_weights,
    held_out_weights,
    kfold_split,
)
from indexer import Dataset
from indexer.data import load_dataset


def _runs(ds: Dataset, seed: int) -> dict[str, dict[str, dict[str, float]]]:
    """A lexical run on BM25's scale and a vector run on a similarity's, where each side finds other relevant
    documents, so the ratio that mixes them best is somewhere inside the grid."""
    rng = random.Random(seed)
    docs = sorted({d for judged in ds.qrels.values() for d in judged})
    lexical, vector = {}, {}
    for q in sorted(ds.queries):
        pool = rng.sample(docs, 30) + list(ds.qrels.get(q, {}))
        lexical[q] = {d: rng.uniform(5, 30) for d in pool[: len(pool) // 2 + 3]}
        vector[q] = {d: rng.uniform(0.5, 1.0) for d in pool[len(pool) // 3 :]}
    return {"lexical": lexical, "vector": vector}


@pytest.fixture(scope="module")
def sample() -> Dataset:
    full = load_dataset("sample")
    keep = sorted(full.queries)[:60]
    return replace(
        full,
        queries={q: full.queries[q] for q in keep},
        qrels={q: full.qrels[q] for q in keep if q in full.qrels},
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_sum_provider_chooses_what_the_sums_own_tuner_chooses(sample: Dataset, seed: int) -> None:
    runs = _runs(sample, seed)
    ctx = SweepContext(("lexical", "vector"), "sum", 100)
    choose = sorted(sample.queries)[seed * 10 :]
    expected = tune_sum_weights(
        {q: sample.qrels[q] for q in choose if q in sample.qrels},
        {q: runs["lexical"][q] for q in choose},
        {q: runs["vector"][q] for q in choose},
        lexical_scale=0.8,
    )
    assert choose_weights(SumGrid(0.8), ctx, runs, sample, choose) == expected
    assert len(PROVIDERS["sum"].choices(SumGrid(), ctx)) == 26  # 0, then 25 log steps


def test_kfold_searches_each_fold_with_weights_chosen_without_it(sample: Dataset) -> None:
    runs = _runs(sample, 7)
    ctx = SweepContext(("lexical", "vector"), "sum", 100)
    searched: list[tuple[list[str], tuple[float, float], int]] = []

    def search(held: Dataset, weights: tuple[float, float], fold: int) -> dict[str, ArmRun]:
        searched.append((sorted(held.queries), weights, fold))
        return {"hybrid-engine-sum": ArmRun(run={q: {"d": 1.0} for q in held.queries}, wall_s=1.0)}

    found = held_out_weights(SumGrid(), ctx, runs, sample, TuneOn(folds=4), 42, search)
    folds = kfold_split(sorted(sample.queries), 4, 42)
    assert [s[0] for s in searched] == [list(f) for f in folds] and [s[2] for s in searched] == [1, 2, 3, 4]
    for (held, weights, _), (w, chosen_on, n) in zip(searched, found.folds, strict=True):
        others = [q for q in sample.queries if q not in held]
        assert weights == w == choose_weights(SumGrid(), ctx, runs, sample, others)
        assert (chosen_on, n) == (len(others), len(held))
    union = found.runs["hybrid-engine-sum"]
    assert sorted(union.run) == sorted(sample.queries) and union.wall_s == 4.0
