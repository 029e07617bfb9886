"""`harness run --experiment`: it takes every flag (over the file), and what it refuses, before connecting."""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.experiment import read_file
from tests._support import REPO

EXAMPLE = str(REPO / "examples" / "experiment.toml")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run"],
            "expected a mode (lexical, vector, hybrid) or --experiment FILE, exactly one, found neither",
        ),
        (["run", "lexical", "--experiment", EXAMPLE], "exactly one, found both"),
        (
            ["run", "lexical", "--queries", "q.tsv", "--qrels", "j.csv"],
            "--queries q.tsv: goes with the experiment's own [[arms]], which name the index to search",
        ),
        (
            ["run", "--experiment", EXAMPLE, "--queries", "q.tsv"],
            "--queries q.tsv: expected queries and their judgments together, found no --qrels",
        ),
        (
            ["run", "--experiment", EXAMPLE, "--depth", "5"],
            "--depth 5: expected 10..1000, found 5",
        ),
        (
            ["run", "--experiment", "no/such.toml"],
            "experiment file not found: expected a TOML file at no/such.toml",
        ),
    ],
)
def test_flags_an_experiment_refuses(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--url", "http://127.0.0.1:1"]) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_flags_and_set_override_the_file_and_old_flags_say_what_replaced_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An experiment file used to refuse --expansion, --rerank, --load, --ann-sweep and every setting flag:
    now each is a key of the same experiment, and the old ones say in one line what replaced them."""
    from harness.cli._experiment import FLAGS, run_experiment
    from harness.cli._views import given_layers

    flags = {"load": True, "rerank": "minilm@20", "tune_on": "kfold:3", "dataset": ["sample"]}
    layers, _ = given_layers(
        FLAGS, flags, ["search.batch_size=64", "sweep.params.knn.num_candidates=[100,400]"]
    )
    exp = run_experiment(read_file(REPO / "examples" / "experiment.toml"), layers, {})
    assert exp.load.enabled and exp.rerank_spec is not None and exp.sweep.tune_on == "kfold:3"
    assert exp.search.batch_size == 64 and exp.sweep.params is not None and exp.data.datasets == ("sample",)
    assert main(["run", "--experiment", EXAMPLE, "--batch-size", "0", "--url", "http://127.0.0.1:1"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "deprecated: --batch-size is replaced by --set search.batch_size=VALUE" in err
    assert "error: --batch-size 0: expected 1..1000, found 0" in err
