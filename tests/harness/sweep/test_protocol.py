"""Held-out tuning is checked against the data before any work: a protocol that cannot run fails at planning;
the grid is in the experiment's identity however it is spelled."""

from __future__ import annotations

import pytest

from base import ConfigError
from harness.experiment import experiment, identity
from harness.sweep import SweepSpec, TuneOn, check_protocol
from indexer import Dataset
from indexer.data import load_dataset


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return load_dataset("sample")


def test_protocols_against_the_sample(sample: Dataset) -> None:
    assert check_protocol(TuneOn(split="train"), sample) == 809
    assert check_protocol(TuneOn(folds=5), sample) == 0
    with pytest.raises(
        ConfigError, match=r"expected kfold:K with 2 <= K <= 300 \(the queries of sample\), found K=301"
    ):
        check_protocol(TuneOn(folds=301), sample)
    with pytest.raises(ConfigError, match="the split test is the evaluation split: tuning must never see it"):
        check_protocol(TuneOn(split="test"), sample)
    with pytest.raises(
        ConfigError,
        match=r"no 'dev' split to tune on \(splits: test, train\); without one, tune on kfold",
    ):
        check_protocol(TuneOn(split="dev"), sample)


def test_the_experiment_carries_the_grid_and_its_identity() -> None:
    exp = experiment(
        values={"mode": "hybrid", "sweep.tune_on": "kfold:3", "sweep.grid": "method=wsum;weights=0.2,0.8"}
    )
    assert exp.tuning == TuneOn(folds=3) and exp.grid == SweepSpec.parse("method=wsum;weights=0.2,0.8")
    assert identity(exp)["sweep.grid"] == "method=wsum;weights=0.2,0.8"
    assert identity(exp)["sweep.tune_on"] == "kfold:3"
    same = experiment(
        values={
            "mode": "hybrid",
            "sweep.tune_on": "kfold:3",
            "sweep.grid": "method=wsum; weights=0.2..0.8/0.6",
        }
    )
    assert identity(same) == identity(exp)  # the same grid however it is spelled: the same run
    plain = experiment(values={"mode": "hybrid", "fusion": "rrf", "sweep.tune_on": "train"})
    assert identity(plain)["sweep.grid"] is None
    assert plain.grid is None
