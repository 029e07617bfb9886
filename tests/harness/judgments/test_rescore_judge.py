"""``harness rescore`` with an LLM judge's labels (``harness judge``; stand-in judges, tests/_openai_server.py):
beside the human judgments (``--mode fill``: people's grade kept, the judge's added), over them (``merge``)
or instead of them (``replace``); the judge's provenance and agreement travel into results.json (schema v2
still validates), report.md and the HTML report, and every table says which judgments it used."""

from __future__ import annotations

import json
import shutil
from html import escape
from pathlib import Path

import jsonschema
import pytest

from harness.cli import main
from harness.inspect import render_html
from harness.results import RunResults, schema
from indexer import load_dataset, read_judgments
from tests._openai_server import OpenAIServer
from tests.harness.conftest import GATE_DATASET


def _rescore(capsys: pytest.CaptureFixture[str], run: Path, qrels: Path, out: Path, mode: str) -> str:
    code = main(["rescore", str(run), "--qrels", str(qrels), "--mode", mode, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def _pairs(qrels: Path) -> dict[tuple[str, str], int]:
    return {(q, d): g for q, docs in read_judgments(qrels).qrels().qrels.items() for d, g in docs.items()}


def test_fill_keeps_peoples_grades_and_adds_the_judges(
    base_run: Path,
    gate_data: Path,
    judged: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    labels = _pairs(judged["measured"])
    human = {(q, d): g for q, docs in load_dataset(str(gate_data)).qrels.items() for d, g in docs.items()}
    out = tmp_path / "fill"
    text = _rescore(capsys, base_run, judged["measured"], out, "fill")
    added = sum(1 for k in labels if k not in human)
    assert f"{len(labels)} judgments for {GATE_DATASET}, {added} new, 0 changed" in text
    stored = _pairs(out / "qrels" / f"{GATE_DATASET}.qrels")
    assert all(stored[k] == g for k, g in human.items()), "people's grades stay"
    assert all(stored[k] == g for k, g in labels.items() if k not in human)
    results = RunResults.load(out)
    used = results.datasets[GATE_DATASET].judgments
    assert (
        used is not None
        and used.mode == "fill"
        and used.judge is not None
        and used.judge.agreement is not None
    )
    assert used.label.startswith("the dataset's own judgments, with judgments.qrels (")
    assert f"labels of judge {used.judge.id} where they judge nothing" in used.label
    applied = results.manifest.rescore.judgments[0] if results.manifest.rescore else None
    assert applied is not None and applied.judge == used.judge.id
    jsonschema.validate(json.loads((out / "results.json").read_text()), schema())
    assert f"judgments: {used.label}; judge {used.judge.id}: kappa" in text  # the rescore prints it


def test_merge_and_replace_and_what_every_report_says(
    base_run: Path,
    gate_data: Path,
    judged: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    labels = _pairs(judged["measured"])
    human = {(q, d): g for q, docs in load_dataset(str(gate_data)).qrels.items() for d, g in docs.items()}
    changed = sum(1 for k, g in labels.items() if k in human and human[k] != g)
    assert changed > 0  # flip:0.1 disagrees with people on some pairs they judged
    text = _rescore(capsys, base_run, judged["measured"], tmp_path / "merge", "merge")
    assert f", {changed} changed" in text
    replaced = tmp_path / "replace"
    _rescore(capsys, base_run, judged["measured"], replaced, "replace")
    assert _pairs(replaced / "qrels" / f"{GATE_DATASET}.qrels") == labels
    results = RunResults.load(replaced)
    judge = results.datasets[GATE_DATASET].judgments.judge  # type: ignore[union-attr]
    assert judge is not None and judge.agreement is not None
    kappa = judge.agreement.combined.binary
    report = (replaced / "report.md").read_text()
    assert (
        f"judgments: judgments.qrels ({read_judgments(judged['measured']).sha256[:8]}): labels of judge"
        in report
    )
    assert (
        "### gate-subset: judge agreement with human judgments" in report and f"{kappa.value:.3f}" in report
    )
    assert "### gate-subset: human grade (rows) against judge label (columns)" in report
    assert "arms by ndcg@10 under human and judge labels" in report
    assert report.count(f"judge {judge.id}") >= 2  # the summary's note and the arm table's
    page = render_html(replaced)
    assert 'id="judge-agreement-gate-subset"' in page and 'id="judge-confusion-gate-subset"' in page
    assert "Judge labels: agreement with human judgments" in page and f"{kappa.value:.3f}" in page
    assert 'id="judgments"' in page and f"judge {judge.id}" in page
    # a run scored with the dataset's own judgments says so too
    assert "judgments: the dataset's own" in (base_run / "report.md").read_text()
    assert escape("judgments: gate-subset: the dataset's own") in render_html(base_run)


def test_a_judge_file_changed_after_judging_is_refused(
    base_run: Path, judged: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "edited"
    shutil.copytree(judged["measured"].parent, folder)
    qrels = folder / "judgments.qrels"
    lines = qrels.read_text().splitlines()
    first = lines[0].split()
    lines[0] = " ".join([*first[:3], "0" if first[3] != "0" else "1"])
    qrels.write_text("\n".join(lines) + "\n")
    assert main(["rescore", str(base_run), "--qrels", str(qrels), "--out", str(tmp_path / "r")]) == 2
    assert "changed after it was judged" in capsys.readouterr().err
    (folder / "judgments.qrels.judge.json").unlink()  # without its provenance it is a plain judgments file
    out = tmp_path / "plain"
    _rescore(capsys, base_run, qrels, out, "fill")
    used = RunResults.load(out).datasets[GATE_DATASET].judgments
    assert used is not None and used.judge is None and "labels of judge" not in used.label


def test_a_rescored_runs_judgments_are_not_peoples(
    base_run: Path, gate_data: Path, judged: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    llm_server: OpenAIServer,
) -> None:  # fmt: skip
    """Judging a run re-scored with a judge's labels measures no agreement: its judgments are not people's."""
    out = tmp_path / "fill"
    _rescore(capsys, base_run, judged["measured"], out, "fill")
    llm_server.state.judge_labels = {}
    try:
        argv = ["judge", str(out), "--arms", "hybrid", "--llm", "truth", "--llm-url", llm_server.url, "-q"]
        code = main([*argv, "--cache-dir", str(tmp_path / "c"), "-o", str(tmp_path / "j")])
    finally:
        llm_server.state.judge_labels = None
    text = capsys.readouterr().out
    assert code == 0 and "the run's judgments hold labels of judge flip:0.1/" in text
    assert "agreement: agreement with human judgments never measured" in text
