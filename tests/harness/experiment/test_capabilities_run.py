"""An experiment file takes every capability a mode run takes, on both real engines: expansion, rerank and
the load phase over template arms give what the built-in arms give (line for line, where the arms are the
built-in templates), and a mode run's tables come from a file as from flags."""

from __future__ import annotations

from pathlib import Path

from harness.cli import main
from harness.results import RunResults, trec_path
from tests._support import R2MED_DEMO

CAPABILITIES = """
datasets = ["{demo}"]

[[arms]]
name = "lexical"
template_file = "builtin:lexical"

[[arms]]
name = "vector"
template_file = "builtin:vector"
model = "minilm"

[[fused]]
name = "hybrid"
inputs = ["lexical", "vector"]
fusion = "rrf"

[expansion]
method = "hyde"

[rerank]
model = "minilm@10"
arms = ["hybrid"]

[load]
enabled = true
iterations = 1
warmup = 0
"""

EXPANDED = ["lexical+hyde", "vector+hyde", "hybrid+hyde", "hybrid>rerank"]


def _run(url: str, out: Path, *argv: str) -> RunResults:
    assert main(["run", *argv, "--output", str(out), "--url", url, "--records", "jsonl", "--quiet"]) == 0
    return RunResults.load(out)


def _lines(out: Path, dataset: str, arm: str) -> list[str]:
    return [" ".join(line.split()[:5]) for line in trec_path(out, dataset, arm).read_text().splitlines()]


def test_template_arms_take_expansion_rerank_and_the_load_phase(engine_url: str, tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(CAPABILITIES.format(demo=R2MED_DEMO))
    mine = _run(engine_url, tmp_path / "exp", "--experiment", str(path))
    (name,) = mine.datasets
    arms = mine.datasets[name].arms
    assert list(arms) == ["lexical", "vector", "hybrid", *EXPANDED[:3], "hybrid>rerank"]
    flags = ["--expansion", "hyde", "--rerank", "minilm@10", "--rerank-arm", "hybrid", "--load"]
    builtin = _run(
        engine_url,
        tmp_path / "builtin",
        "hybrid",
        "--dataset",
        str(R2MED_DEMO),
        *flags,
        "--iterations",
        "1",
        "--warmup",
        "0",
    )
    for arm in [
        "lexical",
        "vector",
        "hybrid",
        *EXPANDED,
    ]:  # the same queries, expanded, reranked: the same runs
        assert _lines(tmp_path / "exp", name, arm) == _lines(tmp_path / "builtin", name, arm), arm
        assert arms[arm].metrics == builtin.datasets[name].arms[arm].metrics, arm
    queries = arms["lexical"].queries
    for arm in ("lexical", "vector+hyde", "hybrid"):  # the load phase replays every engine and fused arm
        load = arms[arm].load
        assert load is not None and load.requests == queries and load.errors == 0, arm
    assert arms["hybrid>rerank"].load is None  # a rerank is local model work: no load of its own
    assert mine.manifest.load_phase is not None and mine.manifest.load_phase.iterations == 1


def test_a_mode_and_its_tables_come_from_a_file_as_from_flags(es_url: str, tmp_path: Path) -> None:
    path = tmp_path / "mode.toml"
    path.write_text(
        f'mode = "lexical"\n[data]\ndatasets = ["{R2MED_DEMO}"]\n[search]\ndepth = 20\n[index]\nbm25 = "r2med"\n'
    )
    from_file = _run(es_url, tmp_path / "file", "--experiment", str(path))
    from_flags = _run(
        es_url,
        tmp_path / "flags",
        "lexical",
        "--dataset",
        str(R2MED_DEMO),
        "--set",
        "search.depth=20",
        "--set",
        "index.bm25=r2med",
    )
    assert from_file.manifest.config_hash == from_flags.manifest.config_hash
    (name,) = from_file.datasets
    assert _lines(tmp_path / "file", name, "lexical") == _lines(tmp_path / "flags", name, "lexical")
    assert max(int(line.split()[3]) for line in _lines(tmp_path / "file", name, "lexical")) <= 20
