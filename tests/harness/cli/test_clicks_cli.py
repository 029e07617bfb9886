"""``harness clicks simulate | judgments | queries`` end to end: files in, judgments out in every format,
and the same log through each real engine's UBI indices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from indexer import ConnectionSettings, connect, read_judgments
from indexer.data import read_queries
from tests._support import drop_indices, scifact_subset


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("clicks") / "scifact20", n_docs=300, n_test=20, n_train=0)


@pytest.fixture(scope="module")
def log(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("log")
    assert (
        main(["clicks", "simulate", "-d", str(data), "--searches", "1000", "--seed", "3", "-o", str(out)])
        == 0
    )
    return out


def _files(log: Path) -> list[str]:
    return ["--events", str(log / "ubi_events.jsonl"), "--queries", str(log / "ubi_queries.jsonl")]


def test_simulate_writes_the_log_and_the_systems(log: Path) -> None:
    events = (log / "ubi_events.jsonl").read_text().splitlines()
    assert len((log / "ubi_queries.jsonl").read_text().splitlines()) == 1000
    assert {json.loads(e)["action_name"] for e in events} == {"impression", "click"}
    assert len(list((log / "runs").glob("*.trec"))) == 10


def test_judgments_with_agreement_and_a_summary(
    data: Path, log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "coec.qrels"
    argv = ["clicks", "judgments", *_files(log), "-d", str(data), "--runs", str(log / "runs" / "*.trec")]
    assert main([*argv, "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1000 searches, 20 queries, 200 (query, document) pairs judged by coec" in printed
    assert (
        "Cohen's kappa (relevant or not)" in printed
        and "10 systems ordered by nDCG@10 on 20 queries" in printed
    )
    judged = read_judgments(out).qrels()
    assert len(judged.qrels) == 20 and sum(len(d) for d in judged.qrels.values()) == 200
    summary = json.loads((tmp_path / "coec.qrels.clicks.json").read_text())
    assert summary["spec"]["model"] == "coec" and summary["agreement"]["kappa"]["value"] > 0.5
    assert summary["against"] == "scifact20 qrels" and summary["agreement"]["systems"]["tau"] > 0.5


@pytest.mark.parametrize("fmt", ["quepid", "rre", "ltr", "tsv"])
def test_judgments_in_every_format_read_back(data: Path, log: Path, tmp_path: Path, fmt: str) -> None:
    trec, other = tmp_path / "j.qrels", tmp_path / f"j.{fmt}"
    base = ["clicks", "judgments", *_files(log), "-d", str(data), "--click-model", "ctr", "--cuts", "1,2"]
    assert main([*base, "-o", str(trec)]) == 0
    assert main([*base, "-o", str(other), "--format", fmt]) == 0
    queries = read_queries(data / "queries.jsonl")
    assert read_judgments(other).qrels(queries).qrels == read_judgments(trec).qrels().qrels


def test_a_query_set_from_the_log(data: Path, log: Path, tmp_path: Path) -> None:
    out = tmp_path / "set.jsonl"
    argv = [
        "clicks",
        "queries",
        *_files(log),
        "-d",
        str(data),
        "--method",
        "top",
        "--size",
        "5",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 5 and rows[0]["frequency"] >= rows[-1]["frequency"]
    assert set(read_queries(out)) <= set(read_queries(data / "queries.jsonl"))


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [  # the same words as the experiment's [judgments] source = "clicks" (one declaration of each key)
        (
            ["--queries", "q.jsonl"],
            "--queries q.jsonl: is an export of the searches: expected the events' export too (--events)",
        ),
        (["--events", "e.jsonl", "--events-index", "ubi_events"], "found both"),
        (
            ["--events", "e.jsonl", "--start", "yesterday"],
            "--start yesterday: expected a date YYYY-MM-DD, found str 'yesterday'",
        ),
        (["--events", "e.jsonl", "--cuts", "two"], "--cuts two: expected a number, found str 'two'"),
        (
            ["--events", "e.jsonl", "--cuts", "2,1"],
            "--cuts 2,1: expected increasing score cut points, found [2.0, 1.0]",
        ),
        (
            ["--events", "e.jsonl", "--click-model", "dbn"],
            "--click-model dbn: expected one of coec, ctr, found 'dbn'",
        ),
        (
            ["--events", "e.jsonl", "--set", "judgments.max_rank=0"],
            "--set judgments.max_rank=0: expected 1..1000, found 0",
        ),
        (["--events", "missing.jsonl"], "expected a JSON-lines file of UBI events"),
    ],
)
def test_errors_say_what_was_expected(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["clicks", "judgments", *argv]) == 2
    assert fragment in capsys.readouterr().err.replace("\n", " ")


def test_the_same_log_through_the_cluster(
    data: Path, engine_settings: ConnectionSettings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["--events-index", "r2med-test-cli-ubi-events", "--queries-index", "r2med-test-cli-ubi-queries"]
    url = ["--url", engine_settings.url]
    backend = connect(engine_settings)
    drop_indices(backend, "r2med-test-cli-ubi-*")
    backend.close()
    sim = tmp_path / "sim"
    assert (
        main(
            [
                "clicks",
                "simulate",
                "-d",
                str(data),
                "--searches",
                "1000",
                "-o",
                str(sim),
                "--index",
                *names,
                *url,
            ]
        )
        == 0
    )
    assert "indexed 1000 searches" in capsys.readouterr().out
    from_index, from_files = tmp_path / "index.qrels", tmp_path / "files.qrels"
    assert main(["clicks", "judgments", *names, *url, "-d", str(data), "-o", str(from_index)]) == 0
    assert main(["clicks", "judgments", *_files(sim), "-d", str(data), "-o", str(from_files)]) == 0
    assert from_index.read_text() == from_files.read_text() and from_index.read_text().count("\n") == 200
