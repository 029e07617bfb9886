"""An interrupted experiment resumes, on the real Elasticsearch, on a cut of the real SciFact (120 abstracts,
20 test claims): a rerun of a finished experiment sends no search (counted by the engine's own search
stats) and writes the same TREC runs and scores; a run killed with SIGKILL after its first arm's
checkpoint searches only the arms it had not finished; another experiment in the same --output is
refused (exit 2, both configuration hashes named) and writes nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.results import Manifest, RunResults, trec_path
from indexer import ConnectionSettings, IndexOptions, build_index, connect, load_dataset
from tests._support import REPO, scifact_subset

DATASET = "resume-subset"
INDEX = f"r2med-{DATASET}"
QUERIES = 20
ARMS = ("first", "second", "third")

EXPERIMENT = """
datasets = ["{cut}"]

[[arms]]
name = "first"
template_file = "builtin:lexical"

[[arms]]
name = "second"
template = '{{"size": {{{{size}}}}, "query": {{"match": {{"title": "{{{{query}}}}"}}}}}}'

[[arms]]
name = "third"
template = '{{"size": {{{{size}}}}, "query": {{"match": {{"text": "{{{{query}}}}"}}}}}}'

[[fused]]
name = "fused"
inputs = ["first", "{fused_with}"]
fusion = "rrf"
"""

#: the child pauses before the second arm's searches (the first arm is then searched and checkpointed), so
#: the test's SIGKILL lands at a known point; every search it sends is a real one
CHILD = """
import sys, time
import harness.run._execute as execute
real = execute.search
def paused(group, *args, **kwargs):
    if group.arms[0].name == "second":
        time.sleep(600)
    return real(group, *args, **kwargs)
execute.search = paused
from harness.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("exp") / DATASET, n_docs=120, n_test=QUERIES, n_train=0)


def _experiment(folder: Path, cut: Path, fused_with: str = "second") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"exp-{fused_with}.toml"
    path.write_text(EXPERIMENT.format(cut=cut, fused_with=fused_with))
    return path


def _args(es_url: str, exp: Path, out: Path) -> list[str]:
    return [
        "run",
        "--experiment",
        str(exp),
        "--output",
        str(out),
        "--url",
        es_url,
        "--no-progress",
        "--records",
        "jsonl",
    ]


def _searches(es_inspect: Any) -> int:
    """Searches the engine ran on the experiment's index (its shards' query_total)."""
    stats = es_inspect.indices.stats(index=INDEX, metric="search")
    return int(stats["_all"]["total"]["search"]["query_total"])


def _counted(es_inspect: Any, args: list[str]) -> tuple[int, int]:
    before = _searches(es_inspect)
    code = main(args)
    return code, _searches(es_inspect) - before


def _index_check(es_inspect: Any, es_url: str, cut: Path) -> int:
    """The searches with which every run (``harness run`` too) checks that the index holds the dataset,
    before any arm searches: the same ``build_index`` call the experiment makes."""
    backend = connect(ConnectionSettings(url=es_url))
    try:
        before = _searches(es_inspect)
        build_index(backend, load_dataset(str(cut)), [], IndexOptions(progress=False))
        return _searches(es_inspect) - before
    finally:
        backend.close()


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    """What the run printed (the console and the errors), with rich's line wrapping undone."""
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())


def _files(out: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(out)): (p.stat().st_mtime_ns, p.stat().st_size) for p in out.rglob("*")}


def _trec(out: Path) -> dict[str, str]:
    return {arm: trec_path(out, DATASET, arm).read_text() for arm in (*ARMS, "fused")}


def test_a_finished_experiment_reruns_without_a_search_and_gives_the_same_files(
    es_url: str, es_inspect: Any, cut: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _args(es_url, _experiment(tmp_path, cut), tmp_path / "out")
    assert main(args) == 0  # builds the index (its first searches are not the run's)
    first_trec, first = _trec(tmp_path / "out"), RunResults.load(tmp_path / "out")
    capsys.readouterr()
    check = _index_check(es_inspect, es_url, cut)
    code, searched = _counted(es_inspect, args)
    assert code == 0 and check > 0 and searched == check  # no arm searched again
    assert f"resuming {tmp_path / 'out'}: 3 arms reused" in _said(capsys)
    assert _trec(tmp_path / "out") == first_trec
    again = RunResults.load(tmp_path / "out")
    for arm in (*ARMS, "fused"):
        mine, theirs = again.datasets[DATASET].arms[arm], first.datasets[DATASET].arms[arm]
        assert mine.metrics == theirs.metrics and mine.target == theirs.target, arm
    print(f"searches: rerun of a finished experiment {searched} (the index check alone: {check})")


def test_another_experiment_in_the_same_output_is_refused_and_writes_nothing(
    es_url: str, cut: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(_args(es_url, _experiment(tmp_path, cut), out)) == 0
    old = RunResults.load(out).manifest.config_hash
    before = _files(out)
    capsys.readouterr()
    assert main(_args(es_url, _experiment(tmp_path, cut, fused_with="third"), out)) == 2
    err = _said(capsys)
    assert f"config hash {old}, this one " in err and "choose another output directory" in err
    new = err.split("this one ")[1][:10]
    assert len(new) == 10 and new != old
    assert _files(out) == before


def test_a_killed_experiment_resumes_and_searches_only_the_missing_arms(
    es_url: str, es_inspect: Any, cut: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp, out = _experiment(tmp_path, cut), tmp_path / "out"
    check = _index_check(es_inspect, es_url, cut)  # (builds the index when no test has yet)
    # an uninterrupted run of the same experiment, to compare with
    code, uninterrupted = _counted(es_inspect, _args(es_url, exp, tmp_path / "whole"))
    assert code == 0 and uninterrupted == check + len(ARMS) + len(ARMS) * QUERIES
    capsys.readouterr()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before = _searches(es_inspect)
    child = subprocess.Popen([sys.executable, "-c", CHILD, *_args(es_url, exp, out)], cwd=REPO, env=env)
    try:
        deadline = time.monotonic() + 300
        while not list(out.glob("arms/*/*/first.json")):
            assert child.poll() is None and time.monotonic() < deadline, (
                "the first arm was never checkpointed"
            )
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    killed_run = _searches(es_inspect) - before
    assert not (out / "results.json").exists() and Manifest.load(out / "manifest.json").status == "running"
    assert len(list(out.glob("arms/*/*/*.json"))) == 1
    # another experiment is refused by the running manifest
    assert main(_args(es_url, _experiment(tmp_path, cut, fused_with="third"), out)) == 2
    assert "holds a run of another configuration (config hash " in _said(capsys)
    code, resumed = _counted(es_inspect, _args(es_url, exp, out))
    assert code == 0
    assert f"resuming {out}: 1 arms reused" in _said(capsys)
    # before any arm searches, each arm still to run asks once which judged documents its index lacks;
    # then one search per query: the killed run had searched the first arm only, the resumed one the others
    assert killed_run == check + len(ARMS) + QUERIES
    assert resumed == check + 2 + 2 * QUERIES
    assert _trec(out) == _trec(tmp_path / "whole")
    mine, whole = RunResults.load(out), RunResults.load(tmp_path / "whole")
    for arm in (*ARMS, "fused"):
        assert mine.datasets[DATASET].arms[arm].metrics == whole.datasets[DATASET].arms[arm].metrics, arm
    print(
        f"searches: killed run {killed_run}, resumed run {resumed} "
        f"(each with the index check: {check}; an uninterrupted run: {uninterrupted})"
    )
