"""The old option names of `harness index` and `harness report` still work for one release: each prints
exactly one ``deprecated:`` line and gives what its new name gives (the same index, error or file).

Those of `expand`, `pool`/`rescore`, `compare` and `kibana import` are tested with their commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from indexer import Backend
from tests._support import drop_indices, scifact_subset
from tests.harness.cli.old_names import deprecated, line
from tests.harness.inspect.synthetic import make_run_dir

NOWHERE = ["--dataset", "sample", "--url", "http://127.0.0.1:9", "--quiet"]


def _summary(out: str) -> tuple[str, str]:
    """(what the index command did, the index it did it to)."""
    found = re.search(r": (built|unchanged|resumed/extended) (\S+) → alias", out)
    assert found, out
    return found.group(1), found.group(2)


def test_index_old_names_reach_the_index_the_new_ones_built(
    es_backend: Backend, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    data = scifact_subset(tmp_path / "old-names-index", n_docs=30, n_test=3, n_train=0)
    drop_indices(es_backend, "r2med-old-names-index*")
    base = ["index", "--dataset", str(data), "--url", es_backend.url]
    assert main([*base, "--embed-model", "minilm", "--quiet"]) == 0
    new = capfd.readouterr()
    work, built = _summary(new.out)
    assert work == "built" and "indexed 30," in new.out and deprecated(new.err) == []
    for old, replaced, given in (
        ("--model/-m", "--embed-model", ["--model", "minilm", "--quiet"]),
        ("--model/-m", "--embed-model", ["-m", "minilm", "--quiet"]),
        ("--no-progress", "--quiet", ["--embed-model", "minilm", "--no-progress"]),
        ("--progress", "leaving it out (progress is the default)", ["--embed-model", "minilm", "--progress"]),
    ):
        assert main([*base, *given]) == 0
        again = capfd.readouterr()
        assert deprecated(again.err) == [line(old, replaced)], given
        assert _summary(again.out) == ("unchanged", built), f"{given}: another index than {built}"


@pytest.mark.parametrize(
    ("old", "new", "value", "then"),
    [
        ("--base-url", "--embed-url", "http://127.0.0.1:1/v1", ["--embed-model", "minilm"]),
        ("--api-key-env", "--embed-key-env", "R2MED_SURELY_UNSET_KEY", ["--embed-model", "openai:x"]),
    ],
)
def test_index_old_endpoint_names_fail_as_the_new_ones_do(
    old: str, new: str, value: str, then: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    """Both refusals come before any cluster is asked: the value went where the new name's goes."""
    code = main(["index", *NOWHERE, new, value, *then])
    wanted = capfd.readouterr().err
    assert code in (1, 2) and "error:" in wanted and deprecated(wanted) == []
    assert main(["index", *NOWHERE, old, value, *then]) == code
    err = capfd.readouterr().err
    assert deprecated(err) == [line(old, new)]
    assert err.replace(line(old, new) + "\n", "") == wanted


def test_index_refuses_an_old_and_a_new_name_together(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["index", *NOWHERE, "--model", "minilm", "--embed-model", "e5"]) == 2
    assert "expected --embed-model or its old name --model/-m, found both" in capfd.readouterr().err


def test_report_out_writes_what_output_writes(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    run_dir = make_run_dir(tmp_path / "run")[0]
    assert main(["report", str(run_dir), "--html", "--output", str(tmp_path / "new.html")]) == 0
    assert deprecated(capfd.readouterr().err) == []
    assert main(["report", str(run_dir), "--html", "--out", str(tmp_path / "old.html")]) == 0
    assert deprecated(capfd.readouterr().err) == [line("--out", "--output")]
    assert (tmp_path / "old.html").read_bytes() == (tmp_path / "new.html").read_bytes()
