"""The compact result table a person reads after a run (issue 21: the default output was a 190-column
table, four footnote paragraphs and two more tables, ~40 lines that read at a glance in no terminal)."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from harness.cli import main
from harness.inspect import MAX_COLUMNS, SIG_MARK, compact_table, print_results, significance_line
from harness.results import RunResults
from tests._support import scifact_subset
from tests.harness.inspect.synthetic import make_run_dir


def printed(results: RunResults, *, wide: bool = False, terminal: bool = False, width: int = 80) -> str:
    out = io.StringIO()
    print_results(results, Console(file=out, force_terminal=terminal, width=width), wide=wide)
    return out.getvalue()


#: a query prompt that makes the vector arm clearly worse (it reaches only the query embeddings)
OFF_TOPIC = "Recipe for chocolate cake with sugar, eggs and flour; football scores and the weather tomorrow: "


@pytest.fixture(scope="module")
def real_run(es_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `harness run hybrid` on Elasticsearch over 150 SciFact test queries (400 documents), its vector
    arm made worse by an off-topic query prompt: enough queries for significant pairs on nDCG@10."""
    root = tmp_path_factory.mktemp("compact")
    data = scifact_subset(root / "compact-subset", n_docs=400, n_test=150, n_train=0)
    out = root / "run"
    args = ["run", "hybrid", "--dataset", str(data), "--output", str(out), "--url", es_url]
    assert main([*args, "--no-progress", "--query-prompt", OFF_TOPIC]) == 0
    return out


def test_a_real_runs_compact_table_fits_100_columns_and_names_its_significant_pairs(real_run: Path) -> None:
    results = RunResults.load(real_run)
    ((name, ds),) = results.datasets.items()
    significant = [c for c in ds.significance if c.significant and c.measure == "ndcg@10"]
    assert significant, "the fixture is meant to hold a significant pair"
    text = printed(results)
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines[:-2]) <= MAX_COLUMNS
    assert lines[0].strip() == f"{name} ({ds.queries} queries)"
    header = lines[2].split()
    assert header == ["arm", "nDCG@10", "95%", "CI", "sig", "R@100", "ANN", "R@10"]
    for arm, result in ds.arms.items():
        (row,) = [line for line in lines if line.split()[:1] == [arm]]
        assert f"{result.metrics['ndcg@10']:.4f}" in row and f"{result.metrics['recall@100']:.4f}" in row
        lo, hi = result.ci95["ndcg@10"]
        assert f"{lo:.3f}–{hi:.3f}" in row
        assert (SIG_MARK in row) == any(arm in (c.arm_a, c.arm_b) for c in significant)
    (pairs,) = [line for line in lines if line.startswith(f"{SIG_MARK} significant")]
    for c in significant:
        better, worse = (c.arm_b, c.arm_a) if c.delta > 0 else (c.arm_a, c.arm_b)
        assert f"{better} > {worse} (+{abs(c.delta):.3f}" in pairs
    assert pairs.count(" > ") == len(significant)
    assert "\x1b" not in text


def test_the_wide_output_is_every_table_and_harness_report_prints_it(
    real_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = RunResults.load(real_run)
    wide = printed(results, wide=True)
    for title in ("(150 queries)", ": paired tests, Holm-corrected together", ": agreement between arms"):
        assert title in wide
    assert "nDCG'@10" in wide and "batch ms p50/p95/p99" in wide  # today's full arm table
    assert main(["report", str(real_run)]) == 0
    out = capsys.readouterr().out
    assert [line.rstrip() for line in out.splitlines()[1:]] == [line.rstrip() for line in wide.splitlines()]
    assert "\x1b" not in out


def test_many_datasets_and_long_arm_names_still_fit(tmp_path: Path) -> None:
    results = RunResults.load(make_run_dir(tmp_path / "run")[0])
    long = "hybrid+query2doc-gpt-4o-2024-08-06-with-a-reranker-over-the-top-100"
    datasets = {
        f"{name}-with-a-rather-long-dataset-name": dataclasses.replace(
            ds, arms={(long if arm == "hybrid" else arm): r for arm, r in ds.arms.items()}
        )
        for name, ds in results.datasets.items()
    }
    results = dataclasses.replace(results, datasets=datasets)
    table = compact_table(results)
    assert table.title == "2 datasets" and [c.header for c in table.columns][:2] == ["dataset", "arm"]
    text = printed(results)
    assert max(len(line.rstrip()) for line in text.splitlines()[:-2]) <= MAX_COLUMNS
    assert re.search(r"hybrid\+query2doc-gpt-4o\S*…", text)  # shortened, visibly
    assert re.search(r"Biology-with-a-rather\S*…", text)
    line = significance_line(results)
    assert line is not None and line.count("\n") == 0  # one line, whatever it names


def test_a_terminal_gets_the_same_compact_table(real_run: Path) -> None:
    results = RunResults.load(real_run)
    text = printed(results, terminal=True, width=100)
    assert "nDCG@10" in text and "95% CI" in text
    assert re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", text) != text  # styled in a terminal, plain in a log
