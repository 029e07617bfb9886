"""Held-out selection: k-fold splits, choosing per fold, and reporting the held-out score, never the in-sample one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from base import ConfigError
from harness.sweep import TuneOn, best, kfold_folds, kfold_split, parse_tune_on, select

QIDS = [f"q{i:03d}" for i in range(53)]


def test_kfold_split_is_a_seeded_partition() -> None:
    folds = kfold_split(QIDS, 5, seed=42)
    flat = [q for f in folds for q in f]
    assert sorted(flat) == sorted(QIDS) and len(flat) == len(set(flat))  # each query in exactly one fold
    assert sorted(len(f) for f in folds) == [10, 10, 11, 11, 11]
    assert all(list(f) == sorted(f) for f in folds)
    # stable: the same ids and seed give the same folds, whatever order the ids come in
    assert kfold_split(list(reversed(QIDS)), 5, seed=42) == folds
    assert kfold_split(QIDS, 5, seed=42) == folds
    # seeded: another seed deals them otherwise; not simply the sorted ids in blocks
    assert kfold_split(QIDS, 5, seed=7) != folds
    assert folds[0] != tuple(sorted(QIDS)[: len(folds[0])])


def test_kfold_folds_hold_each_fold_out_once() -> None:
    folds = kfold_split(QIDS, 4, seed=1)
    pairs = kfold_folds(folds)
    assert [tuple(out) for _, out in pairs] == list(folds)
    for inside, out in pairs:
        assert not set(inside) & set(out) and set(inside) | set(out) == set(QIDS)


@pytest.mark.parametrize(
    ("qids", "k", "message"),
    [
        (QIDS, 1, "expected kfold:K with 2 <= K <= 53 (the queries), found K=1"),
        (QIDS[:3], 4, "expected kfold:K with 2 <= K <= 3 (the queries), found K=4"),
        (["a", "a", "b"], 2, "1 query ids are repeated"),
    ],
)
def test_kfold_split_errors(qids: list[str], k: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kfold_split(qids, k, seed=0)


def test_parse_tune_on() -> None:
    assert parse_tune_on("train") == TuneOn(split="train")
    assert parse_tune_on("kfold") == TuneOn(folds=5) and str(parse_tune_on("kfold")) == "kfold:5"
    assert parse_tune_on("KFOLD:10").folds == 10
    for bad, message in (
        ("kfold:1", "K >= 2"),
        ("kfold:x", "integer K >= 2"),
        ("", "expected SPLIT"),
    ):
        with pytest.raises(ConfigError, match=message):
            parse_tune_on(bad)


def _noise_matrix(n_configs: int, qids: list[str], seed: int) -> dict[str, dict[str, float]]:
    """Configurations that are all equally good (the same true mean): any gap is selection noise."""
    rng = np.random.default_rng(seed)
    return {f"c{i:02d}": {q: float(rng.random()) for q in qids} for i in range(n_configs)}


def test_kfold_reports_the_held_out_score_not_the_in_sample_maximum() -> None:
    qids = QIDS[:50]
    matrix = _noise_matrix(20, qids, seed=3)
    folds = kfold_split(qids, 5, seed=42)
    sel = select(matrix, matrix, kfold_folds(folds))
    # by hand: for each fold, the best mean on the other folds, scored on the fold
    expected: dict[str, float] = {}
    for fold in folds:
        inside = [q for q in qids if q not in fold]
        chosen = max(matrix, key=lambda c: (math.fsum(matrix[c][q] for q in inside), -int(c[1:])))
        expected.update({q: matrix[chosen][q] for q in fold})
    assert sel.per_query == dict(sorted(expected.items()))
    assert sel.held_out == pytest.approx(math.fsum(expected.values()) / len(qids), abs=1e-12)
    # the held-out mean is the size-weighted mean of the fold means
    weighted = math.fsum(f.held_out_score * len(f.held_out) for f in sel.folds) / len(qids)
    assert sel.held_out == pytest.approx(weighted, abs=1e-12)
    top, top_score = best(matrix, qids)
    assert (sel.in_sample_best, sel.in_sample_score) == (top, top_score)
    assert top_score == max(math.fsum(s.values()) / len(qids) for s in matrix.values())
    # with 20 equally good configurations the in-sample maximum is optimistic: well above held out
    assert sel.in_sample_score > sel.held_out + 0.02
    assert len({f.chosen for f in sel.folds}) > 1 and sel.configurations == 20
    for f, (inside, _) in zip(sel.folds, kfold_folds(folds), strict=True):  # chosen: best on its own queries
        assert (f.chosen, f.choose_score) == best(matrix, inside) and f.choose_queries == len(inside)


def test_a_train_split_chooses_on_train_and_scores_on_test() -> None:
    train_q, test_q = [f"t{i}" for i in range(30)], QIDS[:20]
    choose = {"good-on-train": dict.fromkeys(train_q, 0.9), "good-on-test": dict.fromkeys(train_q, 0.1)}
    score = {"good-on-train": dict.fromkeys(test_q, 0.2), "good-on-test": dict.fromkeys(test_q, 0.8)}
    sel = select(choose, score, [(train_q, test_q)])
    assert [f.chosen for f in sel.folds] == ["good-on-train"]
    assert sel.held_out == pytest.approx(0.2) and sel.folds[0].choose_score == pytest.approx(0.9)
    # the oracle on test is reported apart, as optimistic
    assert (sel.in_sample_best, sel.in_sample_score) == ("good-on-test", pytest.approx(0.8))


def test_ties_go_to_the_first_configuration_in_grid_order() -> None:
    matrix = {"b": {"q": 0.5}, "a": {"q": 0.5}}
    assert best(matrix, ["q"]) == ("b", 0.5)


def test_folds_must_partition_the_evaluated_queries() -> None:
    matrix = _noise_matrix(2, QIDS[:10], seed=0)
    with pytest.raises(ConfigError, match="partition the evaluated queries"):
        select(matrix, matrix, [(QIDS[:5], QIDS[5:9])])
