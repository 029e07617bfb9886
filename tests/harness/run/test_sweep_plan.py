"""--tune-on is checked against the data before any work: a protocol that cannot run fails at planning."""

from __future__ import annotations

import pytest

from harness.run import RunConfig
from harness.run._sweep import check_protocol
from harness.sweep import SweepSpec, TuneOn
from indexer import ConfigError, Dataset
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
    with pytest.raises(ConfigError, match="--tune-on test is the evaluation split: tuning must never see it"):
        check_protocol(TuneOn(split="test"), sample)
    with pytest.raises(
        ConfigError,
        match=r"no 'dev' split to tune on \(splits: test, train\); without one, use --tune-on kfold",
    ):
        check_protocol(TuneOn(split="dev"), sample)


def test_the_config_carries_the_grid_and_its_identity() -> None:
    cfg = RunConfig(mode="hybrid", tune_on="kfold:3", sweep="method=wsum;weights=0.2,0.8")
    assert cfg.tuning == TuneOn(folds=3) and cfg.sweep_spec == SweepSpec.parse("method=wsum;weights=0.2,0.8")
    assert cfg.identity()["sweep"] == "method=wsum;weights=0.2,0.8" and cfg.identity()["tune_on"] == "kfold:3"
    same = RunConfig(mode="hybrid", tune_on="kfold:3", sweep="method=wsum; weights=0.2..0.8/0.6")
    assert same.identity() == cfg.identity()  # the same grid however it is spelled: the same run
    plain = RunConfig(mode="hybrid", fusion="rrf", tune_on="train")
    assert "sweep" not in plain.identity()  # runs made before --sweep-fusion keep their config hash
    assert str(plain.sweep_spec) == "rrf"
