"""`harness run --experiment`: the flags it takes, and those it refuses before connecting to anything."""

from __future__ import annotations

import pytest

from harness.cli import main
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
            "--queries and --qrels go with --experiment",
        ),
        (["run", "--experiment", EXAMPLE, "--queries", "q.tsv"], "expected --queries and --qrels together"),
        (
            ["run", "--experiment", EXAMPLE, "--depth", "50", "--tune-on", "train"],
            "an experiment takes its settings from its file: expected none of --tune-on, --depth with it",
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
    assert message in capsys.readouterr().err
