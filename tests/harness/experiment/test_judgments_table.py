"""The ``[judgments]`` table: where the judgments come from, from a file and from ``--set`` alike.

Each source's keys are declared once, as tables of keys (the judge's ``JudgeOptions`` and ``PoolKeys``, the
click model's ``ClickModelSpec`` and ``UbiSource``), with their defaults; a refusal names the key as the user wrote it:
``exp.toml: judgments.combine: ...`` in a file, ``--set judgments.combine=avg: ...`` on the command line.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from base import ConfigError
from harness.cli import main
from harness.experiment import Experiment, describe_keys, experiment, identity
from harness.judgments.clicks import ClickModelSpec
from harness.judgments.judge import DEFAULT_COMBINE, DEFAULT_DEPTH, JudgeOptions
from harness.judgments.sources import SOURCES, Clicks, Files, Judge, Source
from harness.keys import declared
from tests._support import REPO

HEAD = 'mode = "hybrid"\n\n[data]\ndatasets = ["sample"]\n\n[judgments]\n'


def _file(tmp_path: Path, body: str) -> Experiment:
    path = tmp_path / "exp.toml"
    path.write_text(HEAD + body)
    return experiment(path)


def _keys(kind: type[Source]) -> list[str]:
    return [name for table in kind.tables for name in declared(table)]


def _set(*entries: str) -> Experiment:
    return experiment(settings=list(entries), values={"mode": "hybrid"})


def test_a_judge_from_a_file_and_from_set_is_one_source_with_the_judges_defaults(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "mine.toml").write_text(
        'scale = "binary"\nuser = "Is {{document}} relevant to {{query}}? {{labels}}"\n'
    )
    body = 'source = "judge"\nllm = ["m1", "m2"]\ntemplate = "prompts/mine.toml"\ncombine = "max"\nmode = "fill"\n'
    from_file = _file(tmp_path, body)
    (tmp_path / "cwd").mkdir()
    from_set = _set(
        "judgments.source=judge",
        "judgments.llm=m1,m2",
        f"judgments.template={tmp_path / 'prompts' / 'mine.toml'}",
        "judgments.combine=max",
        "judgments.mode=fill",
    )
    for exp in (from_file, from_set):
        source = exp.judgments.spec
        assert isinstance(source, Judge) and exp.judgments.mode == "fill"
        assert [j.model for j in source.spec.judges] == ["m1", "m2"] and source.spec.combine == "max"
        assert (
            source.spec.scale.name == "binary"
            and source.pool.depth == DEFAULT_DEPTH
            and source.pool.arms == ()
        )
    assert from_file.judgments.spec == from_set.judgments.spec
    assert identity(from_file)["judgments"] == identity(from_set)["judgments"]
    # the defaults are the judge's own: the same spec as harness judge --llm m builds
    default = _set("judgments.source=judge", "judgments.llm=m").judgments.spec
    assert isinstance(default, Judge) and default.spec == JudgeOptions(llm=("m",)).build()
    assert default.spec.combine == DEFAULT_COMBINE


def test_clicks_from_a_file_read_the_click_models_own_spec(tmp_path: Path) -> None:
    body = 'source = "clicks"\nevents = "logs/ev.jsonl"\nmodel = "ctr"\nstart = 2025-03-01\ncuts = [1, 3]\n'
    source = _file(tmp_path, body).judgments.spec
    assert isinstance(source, Clicks) and source.log.events == tmp_path / "logs" / "ev.jsonl"
    assert source.model == ClickModelSpec(model="ctr", start=date(2025, 3, 1), cuts=(1.0, 3.0))
    flags = _set("judgments.source=clicks", "judgments.events_index=ubi_events").judgments.spec
    assert isinstance(flags, Clicks) and flags.log.in_index and flags.model == ClickModelSpec()


def test_files_is_the_default_and_keeps_the_runs_hash() -> None:
    exp = _set()
    assert exp.judgments.source == "files" and isinstance(exp.judgments.spec, Files)
    assert "judgments" not in identity(exp)
    judged = _set("judgments.source=judge", "judgments.llm=m")
    assert identity(judged)["judgments"]["judge"] == judged.judgments.spec.spec.id  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('source = "judge"\nllm = "m"\ncombine = "avg"\n', "judgments.combine: expected one of mean, majority, min, max, found 'avg'"),
        ('source = "judge"\nllm = "m"\nmax_doc_tokens = "64"\n', "judgments.max_doc_tokens: expected an integer, found str '64'"),
        ('source = "judge"\nllm = "m"\ndepth = 0\n', "judgments.depth: expected 1..1000, found 0"),
        ('source = "judge"\nllm = "m"\narms = ["nope"]\n', "judgments.arms: expected arms among"),
        ('source = "judge"\nllm = "m"\ntemplate = "none.toml"\n', "judgments.template: expected a judge template"),
        ('source = "judge"\n', "judgments.llm: expected the model name the endpoint serves, found none"),
        ('source = "judge"\nllm = "m"\nevents = "e.jsonl"\n', "judgments.events: unknown key for judgments.source = "
         "judge (a key of judgments.source = clicks): expected some of depth, arms"),
        ('llm = "m"\n', "judgments.llm: unknown key for judgments.source = files (a key of judgments.source = "
         "judge): it takes no keys of its own"),
        ('mode = "fill"\n', "judgments.mode: says how a source's labels meet the dataset's"),
        ('source = "llm"\n', "judgments.source: expected one of files, clicks, judge, found 'llm'"),
        ('source = "clicks"\nevents = "e.jsonl"\nmax_rank = 0\n', "judgments.max_rank: expected 1..1000, found 0"),
        ('source = "clicks"\nevents = "e.jsonl"\nstart = "March"\n', "judgments.start: expected a date YYYY-MM-DD"),
        ('source = "clicks"\nqueries = "q.jsonl"\n', "judgments.queries: is an export of the searches: expected "
         "the events' export too (judgments.events)"),
        ('source = "clicks"\nevents = "e.jsonl"\nevents_index = "ubi"\n', "judgments.events: expected the UBI"),
        ('source = "judge"\nllm = "m"\n\n[sweep]\ntune_on = "kfold:5"\n', "judgments.source: judge labels the "
         "arms' results after they are searched and tuned: expected no sweep.tune_on"),
    ],
)  # fmt: skip
def test_each_bad_key_is_refused_at_its_key_path(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _file(tmp_path, body)
    assert str(caught.value).startswith(f"{tmp_path / 'exp.toml'}: {message}"), str(caught.value)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (["judgments.source=judge", "judgments.llm=m", "judgments.combine=avg"],
         "--set judgments.combine=avg: expected one of mean, majority, min, max, found 'avg'"),
        (["judgments.source=judge"], "judgments.llm: expected the model name the endpoint serves, found none"),
        (["judgments.source=judge", "judgments.llm=m", "judgments.unjudged_only=1"],
         "--set judgments.unjudged_only=1: expected true or false, found int 1"),
        (["judgments.source=clicks", "judgments.events=e.jsonl", "judgments.model=dbn"],
         "--set judgments.model=dbn: expected one of coec, ctr, found 'dbn'"),
        (["judgments.mode=fill"], "--set judgments.mode=fill: says how a source's labels meet the dataset's"),
    ],
)  # fmt: skip
def test_each_bad_set_is_refused_as_written(entries: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _set(*entries)
    assert str(caught.value).startswith(message), str(caught.value)


def test_the_command_line_refuses_before_anything_connects(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "hybrid", "--url", "http://127.0.0.1:9", "--set", "judgments.source=judge"]
    assert main([*argv, "--set", "judgments.llm=m", "--set", "judgments.combine=avg"]) == 2
    err = capsys.readouterr().err
    assert "--set judgments.combine=avg: expected one of mean" in " ".join(err.split())


def test_every_source_key_is_listed_with_its_source_and_its_default() -> None:
    listed = {k: (default, doc) for k, default, doc in describe_keys()}
    for name, kind in SOURCES.items():
        for key in _keys(kind):
            assert listed[f"judgments.{key}"][1].endswith(f"(source {name})")
    assert listed["judgments.max_rank"][0] == repr(ClickModelSpec().max_rank)
    assert listed["judgments.depth"][0] == repr(DEFAULT_DEPTH) and listed["judgments.source"][0] == "'files'"
    # the judge takes every option of harness judge's spec, and the pool's keys
    assert set(_keys(Judge)) == {"depth", "arms", "unjudged_only"} | set(declared(JudgeOptions))


def test_the_shipped_judge_example_reads() -> None:
    exp = experiment(REPO / "examples" / "experiment-judge.toml")
    source = exp.judgments.spec
    assert isinstance(source, Judge) and exp.judgments.mode == "replace" and source.pool.depth == 10
    assert source.pool.arms == ("lexical", "vector", "hybrid") and source.spec.scale.name == "graded"


def test_the_docs_name_every_key_of_every_source() -> None:
    text = (REPO / "docs" / "judgments.md").read_text().split("## In an experiment: the [judgments] table")[1]
    missing = [
        f"{name}.{key}" for name, kind in SOURCES.items() for key in _keys(kind) if f"`{key}`" not in text
    ]
    assert missing == []
