"""``harness gate`` on real run directories, made by real runs on the real engine (see tests/harness/conftest.py).

The regression situations come from a real pair of runs over the same 40 SciFact queries: the
baseline as shipped, and a run whose query prompt (cake and football) degrades the query
embeddings. Each test first checks, independently of the gate (per-query scores from
``per_query.jsonl`` and our randomization test), that the situation it is about really holds
on this data, then checks the gate's verdict.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import junitparser
import pytest

from harness.cli import main
from harness.eval import holm, randomization_test
from harness.gate import GateConfig, Status, evaluate_gate
from harness.results import load_per_query
from tests._support import scifact_subset
from tests.harness.conftest import GATE_DATASET


def gate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["gate", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def scores(run_dir: Path, arm: str, measure: str) -> dict[str, float]:
    return {r.qid: r.metrics[measure] for r in load_per_query(run_dir) if r.arm == arm}


def drop_and_p(base: Path, run: Path, arm: str, measure: str) -> tuple[float, float]:
    """Baseline mean minus run mean, and the raw paired p-value, computed without the gate."""
    a, b = scores(run, arm, measure), scores(base, arm, measure)
    qids = sorted(a)
    mean = lambda s: math.fsum(s[q] for q in qids) / len(qids)  # noqa: E731
    return mean(b) - mean(a), randomization_test([a[q] for q in qids], [b[q] for q in qids])


def row(out: str, rule: str) -> str:
    return next(line for line in out.splitlines() if rule in line and GATE_DATASET in line)


def test_threshold_rules_pass_and_fail(base_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = gate(
        capsys, str(base_run), "--require", "hybrid:ndcg@10>=0.5", "--require", "lexical:unjudged@10<=0.99"
    )
    assert code == 0, out
    assert "meets the floor >= 0.5" in row(out, "hybrid:ndcg@10>=0.5")
    assert "meets the ceiling <= 0.99" in out and "gate passed: 2 checks: 2 passed; exit 0" in out
    code, out = gate(
        capsys, str(base_run), "--require", "hybrid:ndcg@10>=0.99", "--require", "hybrid:ndcg@10>=0.5"
    )
    assert code == 1, out
    assert "FAIL" in row(out, "hybrid:ndcg@10>=0.99") and "misses the floor >= 0.99" in out
    assert "gate FAILED: 2 checks: 1 passed, 1 failed; exit 1" in out


def test_latency_rules_pass_and_fail(base_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = gate(
        capsys, str(base_run), "--require", "vector:p99<=600s", "--require", "hybrid:took-p50<=600000ms"
    )
    assert code == 0, out
    assert "(relevance pass, msearch round trip) within the ceiling <= 600000 ms" in out
    code, out = gate(capsys, str(base_run), "--require", "vector:p99<=0.001ms")
    assert code == 1 and "over the ceiling <= 0.001 ms" in row(out, "vector:p99<=0.001ms"), out


def test_a_significant_regression_within_its_margin_passes(
    base_run: Path, degraded_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The degraded prompt lowers vector nDCG@10 on many queries: significant, but a margin of 0.5 allows it."""
    drop, p = drop_and_p(base_run, degraded_run, "vector", "ndcg@10")
    assert 0.02 < drop < 0.5 and p < 0.05, (drop, p)  # the situation, on this data
    code, out = gate(
        capsys, str(degraded_run), "--baseline", str(base_run), "--require", "vector:ndcg@10 drop<=0.5"
    )
    assert code == 0, out
    line = row(out, "vector:ndcg@10 drop<=0.5")
    assert f"drop {drop:.4f} <= margin 0.5000 (significant, Holm p={p:.3g}, 40 queries): passes" in line


def test_a_large_regression_that_is_not_significant_passes_and_is_flagged(
    base_run: Path, degraded_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hybrid is held up by its lexical half: it drops beyond a tight margin, but not significantly."""
    drop, p = drop_and_p(base_run, degraded_run, "hybrid", "ndcg@10")
    assert drop > 0.005 and p >= 0.05, (drop, p)
    code, out = gate(
        capsys, str(degraded_run), "--baseline", str(base_run), "--require", "hybrid:ndcg@10 drop<=0.005"
    )
    assert code == 0, out
    line = row(out, "hybrid:ndcg@10 drop<=0.005")
    assert "pass (flagged)" in line
    assert (
        f"drop {drop:.4f} > margin 0.0050 but not significant (Holm p={p:.3g}, 40 queries): passes, flagged"
        in line
    )
    assert "1 passed (1 flagged)" in out


def test_a_large_significant_regression_fails(
    base_run: Path, degraded_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drop, p = drop_and_p(base_run, degraded_run, "vector", "ndcg@10")
    assert drop > 0.05 and p < 0.05, (drop, p)
    code, out = gate(
        capsys, str(degraded_run), "--baseline", str(base_run), "--require", "vector:ndcg@10 drop<=0.05"
    )
    assert code == 1, out
    assert f"drop {drop:.4f} > margin 0.0500 and significant (Holm p={p:.3g}, 40 queries): fails" in out


def test_holm_corrects_across_the_regression_rules(base_run: Path, degraded_run: Path) -> None:
    """Five regression rules are one family: each verdict follows its Holm-adjusted p, so a rule whose raw
    p is below 0.05 can be only flagged among several."""
    checks = [
        ("vector", "ndcg@10", 0.05),
        ("vector", "mrr@100", 0.01),
        ("hybrid", "ndcg@10", 0.001),
        ("lexical", "ndcg@10", 0.0),
        ("lexical", "recall@100", 0.0),
    ]
    rules = [f"{arm}:{m} drop<={margin}" for arm, m, margin in checks]
    report = evaluate_gate(GateConfig().with_flags(rules, base_run, None, None), degraded_run)
    raw = [drop_and_p(base_run, degraded_run, arm, m)[1] for arm, m, _ in checks]
    adjusted = holm(raw)
    assert [o.p_value for o in report.outcomes] == pytest.approx(raw)
    assert [o.p_holm for o in report.outcomes] == pytest.approx(adjusted)
    for o, (arm, m, margin), p_holm in zip(report.outcomes, checks, adjusted, strict=True):
        drop = drop_and_p(base_run, degraded_run, arm, m)[0]
        expected = Status.PASS if drop <= margin + 1e-12 else Status.FAIL if p_holm < 0.05 else Status.FLAGGED
        assert o.status is expected, (o.rule.text, drop, p_holm)
    softened = [
        o for o, p in zip(report.outcomes, raw, strict=True) if p < 0.05 and o.status is Status.FLAGGED
    ]
    assert softened, "expected a rule significant on its own but not after Holm's correction"


def test_mismatched_fingerprints_cannot_be_compared(
    es_url: str, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A baseline run over other data under the same dataset name (a 200-document cut): exit 2, and why."""
    other = scifact_subset(tmp_path / "other" / GATE_DATASET, n_docs=200, n_test=30, n_train=0)
    out_dir = tmp_path / "other-run"
    args = ["run", "lexical", "--dataset", str(other), "--output", str(out_dir), "--url", es_url]
    assert main([*args, "--records", "jsonl", "--no-progress"]) == 0
    capsys.readouterr()
    junit = tmp_path / "gate.xml"
    code, out = gate(
        capsys,
        str(base_run),
        "--baseline",
        str(out_dir),
        "--require",
        "lexical:ndcg@10 drop<=0.02",
        "--require",
        "lexical:ndcg@10>=0.1",
        "--junit",
        str(junit),
    )
    assert code == 2, out
    assert "cannot evaluate: dataset gate-subset: the run's fingerprint" in out
    assert (
        "(different corpus, queries, qrels): runs over different data or judgments cannot be compared" in out
    )
    assert "gate could not evaluate: 2 checks: 1 passed, 1 could not be evaluated; exit 2" in out
    suite = next(iter(junitparser.JUnitXml.fromfile(str(junit))))
    assert (suite.tests, suite.errors, suite.failures) == (2, 1, 0)


def test_junit_has_one_case_per_rule_and_dataset(
    es_url: str, gate_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = scifact_subset(tmp_path / "gate-other", n_docs=200, n_test=20, n_train=0)
    run_dir = tmp_path / "two"
    args = ["run", "lexical", "--dataset", str(gate_data), "--dataset", str(second), "--output", str(run_dir)]
    assert main([*args, "--url", es_url, "--records", "jsonl", "--no-progress"]) == 0
    junit, summary = tmp_path / "ci" / "gate.xml", tmp_path / "ci" / "summary.md"
    summary.parent.mkdir()
    summary.write_text("earlier step output\n")
    rules = ["lexical:ndcg@10>=0.3", "gate-other/lexical:ndcg@10>=0.99", "gate-*/lexical:p99<=600s"]
    code, out = gate(
        capsys,
        str(run_dir),
        *(a for r in rules for a in ("--require", r)),
        "--junit",
        str(junit),
        "--summary",
        str(summary),
    )
    assert code == 1, out
    root = ET.parse(junit).getroot()
    cases = [(s.get("name"), c.get("name")) for s in root.iter("testsuite") for c in s.iter("testcase")]
    assert sorted(cases) == sorted(
        [
            ("harness gate: gate-subset", rules[0]),
            ("harness gate: gate-other", rules[0]),
            ("harness gate: gate-other", rules[1]),
            ("harness gate: gate-subset", rules[2]),
            ("harness gate: gate-other", rules[2]),
        ]
    )
    failed = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == [rules[1]]
    assert "misses the floor >= 0.99" in failed[0].find("failure").get("message")  # type: ignore[union-attr]
    xml = junitparser.JUnitXml.fromfile(str(junit))
    assert sum(s.tests for s in xml) == 5 and sum(s.failures for s in xml) == 1
    text = summary.read_text()
    assert text.startswith("earlier step output\n## ❌ harness gate FAILED")
    assert "| gate-other | gate-other/lexical:ndcg@10>=0.99 | ❌ FAIL |" in text


def test_rules_from_a_gate_table(
    base_run: Path, degraded_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "ci" / "gate.toml"
    rules.parent.mkdir()
    rules.write_text(
        "[gate]\n"
        f'baseline = "{os.path.relpath(base_run, rules.parent)}"  # relative to this file\n'
        'require = ["vector:ndcg@10 drop<=0.05", "hybrid:ndcg@10>=0.5"]\n'
        "alpha = 0.05\n"
    )
    code, out = gate(capsys, str(degraded_run), "--rules", str(rules))
    assert code == 1 and "and significant" in row(out, "vector:ndcg@10 drop<=0.05"), out
    code, out = gate(capsys, str(degraded_run), "--rules", str(rules), "--alpha", "0.0001")
    assert code == 0 and "pass (flagged)" in row(out, "vector:ndcg@10 drop<=0.05"), out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["--require", "hybrid:ndcg@10 drop<=0.02"],
            "compares against a baseline: expected --baseline RUN_DIR",
        ),
        ([], "no rules to check"),
        (["--require", "sideways:ndcg@10>=0.5"], "the run has no arm sideways on gate-subset"),
        (["--require", "nowhere/hybrid:ndcg@10>=0.5"], "no dataset of the run matches 'nowhere'"),
        (["--require", "hybrid:p90<=5ms"], "has no p90 latency in results.json"),
        (["--require", "hybrid:map@1000>=0.1"], "has no map@1000 in results.json"),
    ],
)
def test_what_cannot_be_evaluated_exits_2(
    base_run: Path, args: list[str], fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "j.xml"
    code, out = gate(capsys, str(base_run), *args, "--junit", str(junit))
    assert code == 2 and fragment in out, out
    assert ET.parse(junit).getroot().get("errors") == "1"


def test_an_unreadable_run_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = gate(capsys, str(tmp_path), "--require", "hybrid:ndcg@10>=0.5")
    assert code == 2 and "cannot read the run" in out and "expected results.json in it" in out
