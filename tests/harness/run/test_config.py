"""RunConfig validates once: a bad value fails the same way from the CLI, a config file or Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness._search import SearchOptions
from harness.cli import main
from harness.eval import FusionSpec
from harness.run import RunConfig
from indexer import ConfigError

BAD: list[tuple[dict[str, object], list[str], str]] = [
    ({"mode": "sideways"}, ["sideways"], "expected a mode in ['lexical', 'vector', 'hybrid'], found 'sideways'"),
    ({"mode": "hybrid", "depth": 5}, ["hybrid", "--depth", "5"], "expected --depth between 10 and 1000, found 5"),
    ({"mode": "lexical", "bm25": "bogus"}, ["lexical", "--bm25", "bogus"], "expected --bm25 in ['es', 'r2med'], found 'bogus'"),
    ({"mode": "lexical", "records": "kafka"}, ["lexical", "--records", "kafka"], "expected record sinks among jsonl, es (or none), found kafka"),
    ({"mode": "lexical", "tune_on": "train"}, ["lexical", "--tune-on", "train"], "--tune-on tunes fusion weights, so it needs the hybrid mode"),
    ({"mode": "lexical", "test": "coin"}, ["lexical", "--test", "coin"], "expected --test in"),
    ({"mode": "hybrid", "fusion": "nosuch"}, ["hybrid", "--fusion", "nosuch"], "unknown fusion method 'nosuch'"),
    ({"mode": "hybrid", "sweep": "default"}, ["hybrid", "--sweep-fusion", "default"], "--sweep-fusion needs --tune-on train or kfold[:K]: expected held-out queries"),
    ({"mode": "hybrid", "tune_on": "kfold:1"}, ["hybrid", "--tune-on", "kfold:1"], "expected --tune-on kfold:K with K >= 2, found 'kfold:1'"),
    ({"mode": "hybrid", "tune_on": "kfold", "sweep": "method=rrf;weights=0.5"}, ["hybrid", "--tune-on", "kfold", "--sweep-fusion", "method=rrf;weights=0.5"], "no listed method takes weights; methods that do: wsum, wmnz"),
    ({"mode": "lexical", "lexical_field": "x"}, ["lexical", "--lexical-field", "x"], "expected --lexical-field in ['combined', 'multi_match', 'beir'], found 'x'"),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "argv", "message"), BAD, ids=[m[:30] for _, _, m in BAD])
def test_bad_values_fail_alike_from_python_and_the_cli(
    kwargs: dict[str, object], argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError) as info:
        RunConfig(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)
    assert main(["run", *argv, "--dataset", "sample", "--url", "http://127.0.0.1:9"]) == 2
    assert message in capsys.readouterr().err


def test_search_options_are_validated_too() -> None:
    with pytest.raises(ConfigError, match="expected a positive --timeout, found 0"):
        SearchOptions(timeout_s=0)


def test_strings_become_typed_values() -> None:
    cfg = RunConfig(mode="hybrid", fusion="wsum:weights=0.3/0.7", records="jsonl, none", output=Path("x"))
    assert cfg.fusion_spec == FusionSpec(method="wsum", weights=(0.3, 0.7)) and cfg.sinks == ("jsonl",)
    tuned = RunConfig(mode="hybrid", fusion="wsum", tune_on="train")
    assert tuned.fusion_spec.weights == (0.5, 0.5)  # the start; tuning replaces them
    assert "output" not in cfg.identity() and cfg.identity()["fusion"] == "wsum:norm=min-max,weights=0.3/0.7"


def test_performance_options_are_validated_and_never_change_the_run_identity() -> None:
    from harness.ann import SweepOptions
    from harness.load import LoadOptions

    with pytest.raises(ConfigError, match="expected mode vector or hybrid, found lexical"):
        RunConfig(mode="lexical", datasets=("sample",), ann_sweep=SweepOptions())
    with pytest.raises(ConfigError, match="--ann-index-types"):
        SweepOptions(index_types=("hnsw", "nosuch"))
    with pytest.raises(ConfigError, match="--ann-candidates between k"):
        SweepOptions(candidates=(5,))
    plain = RunConfig(mode="hybrid", datasets=("sample",))
    loaded = RunConfig(
        mode="hybrid",
        datasets=("sample",),
        load=LoadOptions(clients=2, iterations=1),
        ann_recall=False,
        ann_sweep=SweepOptions(),
    )
    assert plain.identity() == loaded.identity()  # adding --load resumes the same run directory


def test_bad_load_flags_fail_from_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "hybrid", "--dataset", "sample", "--load", "--duration", "5", "--iterations", "2"])
    assert code == 2
    assert "expected --duration or --iterations, found both" in capsys.readouterr().err
