"""A key is checked against everything that will read it, before any work: ``stats.measures`` must hold what
the paired tests and the evaluation records read, and the compact table shows what was measured."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError
from harness.cli import main
from harness.experiment import experiment
from tests._support import scifact_subset

BASE = {"mode": "hybrid", "data.datasets": ["sample"]}


def test_measures_the_records_cannot_use_are_refused_before_anything_connects(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "hybrid", "--dataset", "sample", "--url", "http://127.0.0.1:9"]
    assert main([*argv, "--set", "stats.measures=ndcg@10,err@10"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "--set stats.measures=ndcg@10,err@10: expected recall@100 among the measures (the evaluation records "
        "keep it per query; output.records none writes none), found ndcg@10, err@10"
    ) in err
    assert "127.0.0.1:9" not in err  # (refused before any connection)


def test_every_reader_of_the_measures_is_asked() -> None:
    with pytest.raises(ConfigError, match=r"expected ndcg@10 among the measures \(the paired tests"):
        experiment(values={**BASE, "stats.measures": "recall@100", "output.records": "none"})
    exp = experiment(values={**BASE, "stats.measures": "ndcg@10,err@10", "output.records": "none"})
    assert exp.stats.measures == ("ndcg@10", "err@10")


def test_the_compact_table_shows_what_was_measured(
    es_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = scifact_subset(tmp_path / "cut", n_docs=120, n_test=15, n_train=0)
    argv = ["run", "lexical", "--dataset", str(data), "--url", es_url, "--output", str(tmp_path / "run")]
    argv += ["--records", "none", "--quiet", "--set", "stats.measures=ndcg@10,err@10"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "nDCG@10" in line)
    assert "err@10" in header, out
