"""One experiment, three sources, one validation: a bad value fails alike from a file, a flag and ``--set``,
and every refusal names what the user wrote (the file's key path, the flag, the ``--set`` entry)."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError
from harness.cli import main
from harness.eval import FusionSpec
from harness.experiment import KEYS, EmbeddingTable, Experiment, SearchTable, experiment, identity

URL = ["--url", "http://127.0.0.1:9"]  # nothing is connected to: every refusal comes first

#: (dotted key, its value in TOML, the flags that give it, what the refusal says after the origin)
BAD: list[tuple[str, str, list[str], str]] = [
    ("mode", '"sideways"', ["sideways"], "expected one of lexical, vector, hybrid, found 'sideways'"),
    ("search.depth", "5", ["hybrid", "--depth", "5"], "expected 10..1000, found 5"),
    ("index.bm25", '"bogus"', ["lexical", "--bm25", "bogus"], "expected one of es, r2med, found 'bogus'"),
    ("output.records", '"kafka"', ["lexical", "--records", "kafka"], "expected record sinks among jsonl, es (or none), found kafka"),
    ("stats.test", '"coin"', ["lexical", "--test", "coin"], "expected one of randomization, t-test, found 'coin'"),
    ("fusion", '"nosuch"', ["hybrid", "--fusion", "nosuch"], "unknown fusion method 'nosuch'"),
    ("sweep.tune_on", '"kfold:1"', ["hybrid", "--tune-on", "kfold:1"], "expected kfold:K with K >= 2, found 'kfold:1'"),
    ("index.lexical_field", '"x"', ["lexical", "--lexical-field", "x"], "expected one of combined, multi_match, beir, found 'x'"),
    ("load.clients", "0", ["hybrid", "--load", "--clients", "0"], "expected 1..10, found 0"),
    ("search.batch_size", "true", ["hybrid", "--batch-size", "true"], "expected an integer, found bool True"),
]  # fmt: skip


def _toml(key: str, value: str) -> str:
    """``key = value`` in its table (``mode = "hybrid"`` besides, unless the key is the mode)."""
    table, _, name = key.rpartition(".")
    head = "" if key == "mode" else 'mode = "hybrid"\ndatasets = ["sample"]\n'
    return head + (f"[{table}]\n{name} = {value}\n" if table else f"{name} = {value}\n")


@pytest.mark.parametrize(("key", "value", "argv", "message"), BAD, ids=[k for k, *_ in BAD])
def test_a_bad_value_is_refused_alike_and_named_as_written(
    key: str, value: str, argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(_toml(key, value))
    with pytest.raises(ConfigError) as info:
        experiment(path)
    assert str(info.value).startswith(f"{path}: {key}: ") and message in str(info.value)
    assert main(["run", *argv, "--dataset", "sample", *URL]) == 2
    flag = (
        f"MODE {argv[0]}"
        if key == "mode"
        else " ".join(a for a in argv if a not in ("hybrid", "lexical", "--load"))
    )
    assert f"error: {flag}: {message}" in " ".join(capsys.readouterr().err.split())
    mode = [] if key == "mode" else ["hybrid"]
    assert main(["run", *mode, "--set", f"{key}={value.strip(chr(34))}", "--dataset", "sample", *URL]) == 2
    assert f"error: --set {key}={value.strip(chr(34))}: {message}" in " ".join(
        capsys.readouterr().err.split()
    )


def test_other_keys_in_a_refusal_are_spelled_as_its_source_spells_keys(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text('mode = "hybrid"\n[sweep]\ngrid = "default"\n')
    with pytest.raises(ConfigError, match=r"exp.toml: sweep.grid: needs sweep.tune_on train or kfold\[:K\]"):
        experiment(path)
    with pytest.raises(ConfigError, match=r"^--sweep-fusion default: needs --tune-on train or kfold\[:K\]"):
        experiment(
            flags={"mode": ("hybrid", "MODE hybrid")},
            settings=[_old("sweep.grid=default", "--sweep-fusion default")],
            flag_names={"sweep.tune_on": "--tune-on"},
        )
    with pytest.raises(ConfigError, match=r"^--set sweep.grid=default: needs sweep.tune_on"):
        experiment(flags={"mode": ("hybrid", "MODE hybrid")}, settings=["sweep.grid=default"])
    with pytest.raises(
        ConfigError, match="--tune-on train: tunes fusion weights, so it needs the hybrid mode"
    ):
        experiment(flags={"mode": ("lexical", "MODE lexical"), "sweep.tune_on": ("train", "--tune-on train")})


def _old(text: str, written: str) -> str:
    from harness.cli._options import SetEntry

    return SetEntry(text, written)


def test_unknown_keys_name_the_table_they_are_in(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text('mode = "lexical"\n[search]\ndepht = 50\n')
    with pytest.raises(
        ConfigError, match=r"exp.toml: search.depht: unknown key: expected one of search.depth, "
    ):
        experiment(path)
    with pytest.raises(ConfigError, match=r"^--set serch.depth=5: unknown key: expected one of name, mode"):
        experiment(values={"mode": "lexical"}, settings=["serch.depth=5"])
    path.write_text('mode = "lexical"\ncolour = "blue"\n')
    with pytest.raises(ConfigError, match=r"exp.toml: colour: unknown key: expected some of "):
        experiment(path)


def test_a_file_the_flags_and_set_layer_and_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text('mode = "hybrid"\ndepth = 50\n[search]\nbatch_size = 8\n')
    exp = experiment(path, flags={"search.depth": (60, "--depth 60")}, settings=["search.batch_size=64"])
    assert (exp.search.depth, exp.search.batch_size) == (60, 64)  # the flags and --set over the file
    with pytest.raises(
        ConfigError,
        match=r"^--set search.depth=70: expected one value for search.depth, found --depth 60 too",
    ):
        experiment(path, flags={"search.depth": (60, "--depth 60")}, settings=["search.depth=70"])
    path.write_text('mode = "hybrid"\ndepth = 50\n[search]\ndepth = 60\n')
    with pytest.raises(
        ConfigError,
        match=r"exp.toml: search.depth: search.depth is given twice \(also as .*exp.toml: depth\)",
    ):
        experiment(path)


def test_defaults_are_the_tables_and_strings_become_typed_values() -> None:
    exp = experiment(
        values={"mode": "hybrid", "fusion": "wsum:weights=0.3/0.7", "output.records": "jsonl, none"}
    )
    assert exp.fusion == FusionSpec(method="wsum", weights=(0.3, 0.7)) and exp.output.sinks == ("jsonl",)
    assert (
        exp.search == SearchTable() and exp.embedding == EmbeddingTable() and exp.data.datasets == ("r2med",)
    )
    tuned = experiment(values={"mode": "hybrid", "fusion": "wsum", "sweep.tune_on": "train"})
    assert tuned.fusion.weights == (0.5, 0.5)  # the start; tuning replaces them
    assert identity(exp)["fusion"] == "wsum:norm=min-max,weights=0.3/0.7" and "output" not in identity(exp)
    assert experiment(values={"mode": "hybrid"}, settings=["ann.candidates=10,40"]).ann.candidates == (10, 40)
    assert experiment(values={"mode": "hybrid"}, settings=["data.revision=2024"]).data.revision == "2024"


def test_performance_and_output_keys_never_change_the_identity() -> None:
    plain = experiment(values={"mode": "hybrid", "data.datasets": ["sample"]})
    loaded = experiment(
        values={"mode": "hybrid", "data.datasets": ["sample"], "output.quiet": True},
        settings=[
            "load.enabled=true",
            "load.clients=2",
            "load.iterations=1",
            "ann.recall=false",
            "ann.sweep=true",
        ],
    )
    assert identity(plain) == identity(loaded)  # adding the load phase resumes the same run directory
    with pytest.raises(
        ConfigError,
        match=r"^--set ann.sweep=true: sweeps the vector arm's kNN: expected mode vector or hybrid, found lexical",
    ):
        experiment(values={"mode": "lexical"}, settings=["ann.sweep=true"])
    with pytest.raises(
        ConfigError, match=r"^--set ann.index_types=hnsw,nosuch: expected one of .*found 'nosuch'"
    ):
        experiment(values={"mode": "vector"}, settings=["ann.index_types=hnsw,nosuch"])


def test_bad_load_flags_fail_from_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["run", "hybrid", "--dataset", "sample", "--load", "--duration", "5", "--iterations", "2", *URL]
    )
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "error: --duration 5: expected --set load.duration=VALUE or --set load.iterations=VALUE, found both"
        in err
    )


def test_every_key_has_a_table_field_with_its_one_default() -> None:
    assert len(KEYS) > 50 and all("." in k or k in ("name", "mode", "fusion") for k in KEYS)
    assert Experiment().search.depth == 100 and Experiment().label == "experiment"
