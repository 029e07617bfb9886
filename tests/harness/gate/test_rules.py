"""Gate rules as parsed value objects (no engine needed): syntax, kinds, [gate] tables, latency lookup."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.eval import Measure
from harness.gate import (
    RULE_KINDS,
    GateConfig,
    GateError,
    LatencyRule,
    RegressionRule,
    Target,
    ThresholdRule,
    latency_figure,
    parse_rule,
)
from harness.results import ArmResult, Distribution, LoadResult, Percentiles


def test_one_parser_per_kind() -> None:
    assert list(RULE_KINDS) == ["latency", "regression", "threshold"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "hybrid:ndcg@10>=0.65",
            ThresholdRule("hybrid:ndcg@10>=0.65", Target("*", "hybrid"), Measure("nDCG", 10), ">=", 0.65),
        ),
        (
            "sample/lexical:Unjudged@10 <= 0.95",
            ThresholdRule(
                "sample/lexical:Unjudged@10 <= 0.95",
                Target("sample", "lexical"),
                Measure("Unjudged", 10),
                "<=",
                0.95,
            ),
        ),
        (
            "r2med/Biology/hybrid:nDCG_judged@10>.5",
            ThresholdRule(
                "r2med/Biology/hybrid:nDCG_judged@10>.5",
                Target("r2med/Biology", "hybrid"),
                Measure("nDCG_judged", 10),
                ">",
                0.5,
            ),
        ),
        (
            "hybrid>rerank:ndcg@10>=0.6",
            ThresholdRule(
                "hybrid>rerank:ndcg@10>=0.6", Target("*", "hybrid>rerank"), Measure("nDCG", 10), ">=", 0.6
            ),
        ),
        ("vector:p99<=50ms", LatencyRule("vector:p99<=50ms", Target("*", "vector"), "p99", "<=", 50.0)),
        (
            "vector:took-p50 < 0.2 s",
            LatencyRule("vector:took-p50 < 0.2 s", Target("*", "vector"), "took-p50", "<", 200.0),
        ),
        (
            "hybrid:ndcg@10 drop<=0.02",
            RegressionRule("hybrid:ndcg@10 drop<=0.02", Target("*", "hybrid"), Measure("nDCG", 10), 0.02),
        ),
        (
            "r2med/*/hybrid:ndcg@10 regress<=5% vs baseline",
            RegressionRule(
                "r2med/*/hybrid:ndcg@10 regress<=5% vs baseline",
                Target("r2med/*", "hybrid"),
                Measure("nDCG", 10),
                0.05,
                relative=True,
            ),
        ),
        (
            "hybrid+hyde:recall@100 drop<=0 vs baseline:lexical",
            RegressionRule(
                "hybrid+hyde:recall@100 drop<=0 vs baseline:lexical",
                Target("*", "hybrid+hyde"),
                Measure("Recall", 100),
                0.0,
                baseline_arm="lexical",
            ),
        ),
    ],
)
def test_rules_parse_into_value_objects(text: str, expected: object) -> None:
    assert parse_rule(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("ndcg@10>=0.65", "expected [DATASET/]ARM:BODY"),
        ("hybrid:ndcg@10=0.65", "expected ARM:MEASURE>=VALUE (threshold)"),
        ("hybrid:bleu@10>=0.65", "unknown measure 'bleu'"),
        ("hybrid:p99<=50", "found the body 'p99<=50'"),  # a latency needs its unit
        ("hybrid:ndcg@10 drop>=0.02", "regression against --baseline"),
        ("hy brid:ndcg@10>=0.5", "expected an arm name before ':'"),
    ],
)
def test_bad_rules_say_what_was_expected(text: str, fragment: str) -> None:
    with pytest.raises(GateError) as info:
        parse_rule(text)
    assert fragment in str(info.value) and info.value.exit_code == 2


def test_targets_match_datasets_by_name_or_glob() -> None:
    assert Target("*", "x").matches("r2med/Biology")
    assert Target("r2med/*", "x").matches("r2med/Biology") and not Target("r2med/*", "x").matches("sample")
    assert Target("sample", "x").matches("sample") and not Target("sample", "x").matches("samples")


def test_a_gate_table_is_parsed_from_a_mapping(tmp_path: Path) -> None:
    table = {
        "require": ["hybrid:ndcg@10>=0.6", "hybrid:ndcg@10 drop<=0.02"],
        "baseline": "runs/prod",
        "alpha": 0.01,
    }
    config = GateConfig.from_table(table, "experiment.toml", tmp_path)
    assert [r.kind for r in config.rules] == ["threshold", "regression"]
    assert config.baseline == tmp_path / "runs" / "prod" and config.options.alpha == 0.01
    merged = config.with_flags(["vector:p99<=50ms"], tmp_path / "other", None, "t-test")
    assert len(merged.rules) == 3 and merged.baseline == tmp_path / "other"
    assert merged.options.alpha == 0.01 and merged.options.test == "t-test"


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ({"require": "hybrid:ndcg@10>=0.6"}, "expected [gate] require to be a list of rule strings"),
        ({"rules": []}, "unknown key(s) rules in [gate]"),
        ({"require": [], "alpha": 2}, "expected a significance level alpha between 0 and 1, found 2"),
        ({"require": [], "test": "z-test"}, "expected a paired test among randomization, t-test"),
        ({"require": ["nonsense"]}, "rule 'nonsense'"),
        ({"baseline": 3}, "expected [gate] baseline to be a path string"),
    ],
)
def test_bad_gate_tables_name_the_file(table: dict[str, object], fragment: str) -> None:
    with pytest.raises(GateError) as info:
        GateConfig.from_table(table, "exp.toml")
    assert str(info.value).startswith("exp.toml: ") and fragment in str(info.value)


def test_a_rules_file_needs_a_gate_table(tmp_path: Path) -> None:
    path = tmp_path / "ci.toml"
    path.write_text('[connection]\nurl = "http://x"\n')
    with pytest.raises(GateError, match=r"expected a \[gate\] table, found connection"):
        GateConfig.from_file(path)
    path.write_text("[gate\n")
    with pytest.raises(GateError, match="expected a TOML file with a"):
        GateConfig.from_file(path)


def test_latency_is_read_in_one_place() -> None:
    arm = ArmResult({}, {}, Percentiles(10.0, 20.0, 30.0), Percentiles(1.0, 2.0, 3.0), None, 5)
    assert latency_figure(arm, "p99").ms == 30.0  # type: ignore[union-attr]
    assert latency_figure(arm, "took-p50").ms == 1.0  # type: ignore[union-attr]
    assert "msearch round trip" in latency_figure(arm, "p95").source  # type: ignore[union-attr]
    assert latency_figure(arm, "p90") is None  # comes with the load phase
    d = Distribution(p50=4.0, p90=5.0, p99=6.0, p99_9=7.0, max=8.0)
    load = LoadResult(
        "search", 1, None, 10, 0, 0.0, 100.0, 1.0, Distribution(p50=3.0), d, Distribution(p50=0.5), d
    )
    loaded = replace(arm, load=load)
    assert latency_figure(loaded, "p99").ms == 6.0  # type: ignore[union-attr]  # preferred when present
    assert latency_figure(loaded, "p90").source == "load phase, per-request latency"  # type: ignore[union-attr]
    assert latency_figure(loaded, "took-p50").ms == 0.5  # type: ignore[union-attr]
    assert latency_figure(loaded, "p95") is None  # Rally's percentiles: p50, p90, p99, p99.9, max
