"""`harness run --help` fits one 40-line screen in panels; every flag it had before still works for one
release, hidden, with one deprecation line, and lands on the experiment key that replaced it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import typer.testing

import harness.cli._run as run_cli
from harness.cli import app, main
from harness.cli._experiment import DEPRECATED
from harness.experiment import Experiment
from tests._support import REPO

#: each old flag, a value, and where that value lands in the experiment
OLD: list[tuple[list[str], str, Any]] = [
    (["--model", "e5"], "embedding.model", "e5"),
    (["-m", "e5"], "embedding.model", "e5"),
    (["--base-url", "http://127.0.0.1:8000/v1"], "embedding.url", "http://127.0.0.1:8000/v1"),
    (["--api-key-env", "MY_KEY"], "embedding.key_env", "MY_KEY"),
    (["--embed-backend", "onnx"], "embedding.backend", "onnx"),
    (["--query-prompt", "query: "], "embedding.query_prompt", "query: "),
    (["--document-prompt", "passage: "], "embedding.document_prompt", "passage: "),
    (["--trust-remote-code"], "embedding.trust_remote_code", True),
    (["--revision", "2024"], "data.revision", "2024"),
    (["--tune-on", "kfold", "--sweep-fusion", "rrf"], "sweep.grid", "rrf"),
    (["--rerank", "minilm", "--rerank-arm", "vector", "--rerank-arm", "lexical"], "rerank.arms", ("vector", "lexical")),
    (["--depth", "50"], "search.depth", 50),
    (["--num-candidates", "500"], "search.num_candidates", 500),
    (["--batch-size", "64"], "search.batch_size", 64),
    (["--concurrency", "4"], "search.concurrency", 4),
    (["--timeout", "30"], "search.timeout", 30.0),
    (["--max-retries", "7"], "search.max_retries", 7),
    (["--bm25", "r2med"], "index.bm25", "r2med"),
    (["--lexical-field", "beir"], "index.lexical_field", "beir"),
    (["--analysis", "standard"], "index.analysis", "standard"),
    (["--test", "t-test"], "stats.test", "t-test"),
    (["--seed", "7"], "stats.seed", 7),
    (["--load", "--clients", "3"], "load.clients", 3),
    (["--load", "--duration", "2.5"], "load.duration", 2.5),
    (["--load", "--iterations", "2"], "load.iterations", 2),
    (["--load", "--target-throughput", "50"], "load.target_throughput", 50.0),
    (["--load", "--warmup", "0.5"], "load.warmup", 0.5),
    (["--load", "--load-timeout", "5"], "load.timeout", 5.0),
    (["--ann-recall"], "ann.recall", True),
    (["--no-ann-recall"], "ann.recall", False),
    (["--ann-sweep", "--ann-index-types", "hnsw,flat"], "ann.index_types", ("hnsw", "flat")),
    (["--ann-sweep", "--ann-candidates", "10,40"], "ann.candidates", (10, 40)),
    (["--records-url", "http://127.0.0.1:9201"], "output.records_url", "http://127.0.0.1:9201"),
    (["--progress"], "output.quiet", False),
    (["--no-progress"], "output.quiet", True),
    (["--username", "elastic"], "connection.username", "elastic"),
    (["--username", "elastic", "--password", "s3cret"], "connection.password", "s3cret"),
    (["--api-key", "a2V5"], "connection.api_key", "a2V5"),
    (["--ca-cert", str(REPO / "pyproject.toml")], "connection.ca_cert", REPO / "pyproject.toml"),
    (["--insecure"], "connection.verify", False),
    (["--config", str(REPO / "pyproject.toml")], "connection.config", REPO / "pyproject.toml"),
]  # fmt: skip
#: the old flags that need a file (a mapping): checked with one
MAPPING_FLAGS = ("--mapping", "--field-map")


class Built(Exception):
    """Raised instead of running: the experiment the command built."""

    def __init__(self, exp: Experiment) -> None:
        self.exp = exp


def _built(monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[Experiment, str]:
    def capture(exp: Experiment, **_: Any) -> None:
        raise Built(exp)

    monkeypatch.setattr(run_cli, "run", capture)
    result = typer.testing.CliRunner().invoke(app, ["run", "hybrid", "--dataset", "sample", *argv])
    assert isinstance(result.exception, Built), result.output
    return result.exception.exp, result.output


def _get(exp: Experiment, key: str) -> Any:
    table, _, name = key.partition(".")
    return getattr(getattr(exp, table), name)


def test_the_help_fits_one_screen_in_panels() -> None:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb", "NO_COLOR": "1"}
    shown = typer.testing.CliRunner().invoke(app, ["run", "--help"], env=env).output
    lines = shown.splitlines()
    assert len(lines) <= 40, shown
    assert max(len(line) for line in lines) <= 80
    for panel in ("What to evaluate", "Arms and phases", "Options", "Connection"):
        assert f"─ {panel} ─" in shown
    for flag in (
        "--dataset",
        "--experiment",
        "--queries",
        "--qrels",
        "--split",
        "--embed-model",
        "--expansion",
    ):
        assert flag in shown
    for flag in ("--rerank", "--fusion", "--tune-on", "--load", "--ann-sweep", "--output", "--records"):
        assert flag in shown
    for flag in ("--quiet", "--wide", "--set", "--url"):
        assert flag in shown
    for flag in ("--username", "--password", "--api-key", "--insecure", "--ca-cert", "--config"):
        assert flag not in shown  # (the connection is one table: --set connection.KEY=VALUE)
    hidden = [d.old for d in DEPRECATED if f"{d.old} " in shown or shown.endswith(d.old)]
    assert hidden == [] and "--batch-size" not in shown and "--no-progress" not in shown


@pytest.mark.parametrize(("argv", "key", "value"), OLD, ids=[" ".join(a) for a, _, _ in OLD])
def test_an_old_flag_lands_on_its_key_with_one_deprecation_line(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], key: str, value: Any
) -> None:
    exp, output = _built(monkeypatch, *argv)
    assert _get(exp, key) == value
    names = {d.short: d.spelled for d in DEPRECATED if d.short} | {d.old: d.spelled for d in DEPRECATED}
    old = {
        names[a] for a in argv if a in names
    }  # (each old flag used says so once, however often it is given)
    lines = [line for line in output.splitlines() if line.startswith("deprecated:")]
    assert len(lines) == len(old) and {line.split()[1] for line in lines} == old, output


def test_the_mapping_flags_land_on_the_index_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"mappings": {"properties": {"body": {"type": "text"}}}}')
    exp, output = _built(monkeypatch, "--mapping", str(path), "--field-map", "text=body")
    assert exp.index.mapping == path and exp.user_mapping is not None and exp.index.field_map == "text=body"
    assert sum(line.startswith("deprecated:") for line in output.splitlines()) == len(MAPPING_FLAGS)


def test_every_old_flag_is_covered_here() -> None:
    covered = {a for argv, _, _ in OLD for a in argv if a.startswith("-")} | set(MAPPING_FLAGS)
    assert {d.old for d in DEPRECATED} | {d.short for d in DEPRECATED if d.short} <= covered


def test_new_flags_set_the_same_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    exp, output = _built(
        monkeypatch,
        "--embed-model",
        "e5",
        "--set",
        "embedding.url=http://h/v1",
        "--quiet",
        "--wide",
        "--set",
        "search.depth=40",
    )
    assert (exp.embedding.model, exp.embedding.url, exp.output.quiet, exp.output.wide) == (
        "e5",
        "http://h/v1",
        True,
        True,
    )
    assert exp.search.depth == 40 and "deprecated" not in output


def test_an_old_and_a_new_name_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["run", "hybrid", "--model", "e5", "--embed-model", "bge", "--url", "http://127.0.0.1:9"]) == 2
    )
    assert "expected --embed-model or its old name --model/-m, found both" in capsys.readouterr().err
