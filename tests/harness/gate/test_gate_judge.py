"""Gates on an LLM judge's labels say so (stand-in judges, tests/_openai_server.py: rules, not an LLM).

A rule over figures scored with a judge's labels carries the judge's id and measured agreement into the
table, the JUnit file (case properties and output) and the Markdown summary; a latency rule, which reads
no judgment, does not. A judge whose agreement was never measured is refused, unless
``--allow-unmeasured-judge`` (or ``allow_unmeasured_judge = true`` in the ``[gate]`` table) says otherwise.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from harness.gate import GateConfig, GateError
from harness.results import RunResults
from tests._openai_server import OpenAIServer
from tests.harness.conftest import GATE_DATASET

RULES = ("--require", "hybrid:ndcg@10>=0.1", "--require", "vector:p99<=60s")


@pytest.fixture(scope="module")
def rescored(
    base_run: Path, judged: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gate-judge")
    runs = {"measured": "replace", "unmeasured": "fill"}
    for name, mode in runs.items():
        argv = [
            "rescore",
            str(base_run),
            "--qrels",
            str(judged[name]),
            "--mode",
            mode,
            "--out",
            str(out / name),
        ]
        assert main(argv) == 0
    return {name: out / name for name in runs}


def _gate(capsys: pytest.CaptureFixture[str], run: Path, tmp_path: Path, *extra: str) -> tuple[int, str]:
    code = main(
        [
            "gate",
            str(run),
            *RULES,
            "--junit",
            str(tmp_path / "g.xml"),
            "--summary",
            str(tmp_path / "g.md"),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_rules_over_judge_labels_carry_the_judge_and_its_agreement(
    rescored: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _gate(capsys, rescored["measured"], tmp_path)
    assert code == 0, text
    judge = RunResults.load(rescored["measured"]).datasets[GATE_DATASET].judgments.judge  # type: ignore[union-attr]
    assert judge is not None and judge.agreement is not None
    note = f"labels of judge {judge.id}: {judge.agreement_text()}"
    assert f"{GATE_DATASET}: rules over relevance read {note}" in text
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "g.xml").getroot().iter("testcase")}
    ndcg, latency = cases["hybrid:ndcg@10>=0.1"], cases["vector:p99<=60s"]
    props = {p.get("name"): p.get("value") for p in ndcg.iter("property")}
    assert props == {"judge": judge.id, "judge_agreement": judge.agreement_text()}
    assert note in (ndcg.findtext("system-out") or "")
    assert not list(latency.iter("property")) and "judge" not in (latency.findtext("system-out") or "")
    kappa = judge.agreement.combined.binary
    summary = (tmp_path / "g.md").read_text()
    assert judge.id in summary and f"kappa {kappa.value:.3f} [{kappa.low:.3f}, {kappa.high:.3f}]" in summary


def test_a_judge_never_measured_is_refused_unless_allowed(
    rescored: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = rescored["unmeasured"]
    judge = RunResults.load(run).datasets[GATE_DATASET].judgments.judge  # type: ignore[union-attr]
    assert judge is not None and judge.agreement is None
    code, text = _gate(capsys, run, tmp_path)
    assert code == 2
    assert f"labels of judge {judge.id}, whose agreement with human judgments was never measured" in text
    assert "--allow-unmeasured-judge" in text
    assert "never measured" in ET.parse(tmp_path / "g.xml").getroot().find(".//error").get("message", "")  # type: ignore[union-attr]
    code, text = _gate(capsys, run, tmp_path, "--allow-unmeasured-judge")
    assert code == 0, text
    assert f"labels of judge {judge.id}: agreement with human judgments never measured" in text
    # a gate of latency alone reads no judgment: nothing to refuse
    assert main(["gate", str(run), "--require", "vector:p99<=60s"]) == 0


def test_the_gate_table_can_allow_it_too(rescored: dict[str, Path], tmp_path: Path) -> None:
    rules = tmp_path / "gate.toml"
    rules.write_text('[gate]\nrequire = ["hybrid:ndcg@10>=0.1"]\nallow_unmeasured_judge = true\n')
    assert GateConfig.from_file(rules).allow_unmeasured_judge is True
    assert main(["gate", str(rescored["unmeasured"]), "--rules", str(rules)]) == 0
    rules.write_text('[gate]\nrequire = ["hybrid:ndcg@10>=0.1"]\nallow_unmeasured_judge = "yes"\n')
    with pytest.raises(GateError, match="expected \\[gate\\] allow_unmeasured_judge to be true or false"):
        GateConfig.from_file(rules)


def test_an_agreement_measured_for_the_same_judge_elsewhere_stands(
    base_run: Path, gate_data: Path, judged: dict[str, Path], llm_server: OpenAIServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """``harness judge --agreement-from``: the unjudged pairs judged by the judge measured on the judged ones."""
    llm_server.state.judge_labels = {}
    base = [
        "judge",
        str(base_run),
        "--arms",
        "lexical,vector,hybrid",
        "--unjudged-only",
        "--llm-url",
        llm_server.url,
    ]
    base += ["--cache-dir", str(tmp_path / "c"), "-q", "--agreement-from", str(judged["measured"])]
    try:
        code = main([*base, "--llm", "flip:0.1", "-o", str(tmp_path / "j")])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert main([*base, "--llm", "flip:0.2", "-o", str(tmp_path / "k")]) == 2
        assert "expected labels of the same judge (flip:0.2/" in capsys.readouterr().err
    finally:
        llm_server.state.judge_labels = None
    qrels = tmp_path / "j" / GATE_DATASET / "judgments.qrels"
    out = tmp_path / "rescored"
    assert main(["rescore", str(base_run), "--qrels", str(qrels), "--mode", "fill", "--out", str(out)]) == 0
    capsys.readouterr()
    code, text = _gate(capsys, out, tmp_path)
    assert code == 0, text
    assert f"measured in {judged['measured'].resolve()})" in text
