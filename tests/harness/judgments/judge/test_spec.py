"""A judge's configuration is a table of keys (``judgments.*``), checked once by their declarations; a refusal
names the key as the user wrote it, from a file, ``--set`` or ``harness judge``'s flags alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from base import ConfigError
from harness.cli import main
from harness.judgments.judge import JudgeOptions, builtin_prompt
from harness.keys import table_of


def _spec(**values: Any) -> Any:
    return table_of(JudgeOptions, values, "judgments").build()


def test_judges_are_models_times_templates_on_one_scale() -> None:
    spec = _spec(llm=["m1", "m2"], template="graded", llm_url="http://127.0.0.1:9/v1")
    graded = builtin_prompt("graded").sha256[:12]
    assert [j.id for j in spec.judges] == [f"m1/{graded}/graded", f"m2/{graded}/graded"]
    assert spec.id == f"mean(m1/{graded}/graded+m2/{graded}/graded)"
    assert spec.settings.temperature == 0.0 and spec.settings.top_p is None  # judges sample deterministically
    assert (spec.context.source, spec.context.fields, spec.context.max_doc_tokens) == (
        "dataset",
        ("title", "text"),
        512,
    )
    assert spec.endpoint.url() == "http://127.0.0.1:9/v1" and spec.human_unjudged == "auto"
    single = _spec(llm="m1", template="binary", combine="max", max_retries=0)
    assert (
        single.id == f"m1/{builtin_prompt('binary').sha256[:12]}/binary"
        and single.endpoint.retry.max_retries == 0
    )
    with pytest.raises(ConfigError, match=r"template: expected every judge on one scale .* binary, graded"):
        _spec(llm="m1", template=["graded", "binary"])
    with pytest.raises(ConfigError, match="llm: expected different judges, found m1/"):
        _spec(llm=["m1", "m1"])
    assert JudgeOptions(llm=("m1",)).build().id == _spec(llm="m1").id  # its defaults are the key's


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, "judgments.llm: expected the model name the endpoint serves, found none"),
        ({"combine": "avg"}, "judgments.combine: expected one of mean, majority, min, max, found 'avg'"),
        ({"context_source": "web"}, "judgments.context_source: expected one of dataset, index, found 'web'"),
        ({"context_fields": "abstract"}, "judgments.context_fields: expected fields among title, text"),
        ({"max_doc_tokens": 3}, r"judgments.max_doc_tokens: expected 16\.\.100000, found 3"),
        ({"max_doc_tokens": "64"}, "judgments.max_doc_tokens: expected an integer, found str '64'"),
        ({"human_unjudged": "one"}, "judgments.human_unjudged: expected one of auto, zero, skip"),
        ({"template": "nope.toml"}, "template: expected a judge template .* cannot read nope.toml"),
        ({"temperature": 3.0}, r"judgments.temperature: expected 0\.\.2, found 3\.0"),
        ({"llm": ["m", 3]}, "judgments.llm: expected a string, found int 3"),
    ],
)
def test_a_bad_key_is_named(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _spec(**({"llm": "m"} | values) if values else {})


def test_harness_judge_refuses_with_the_same_words(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The flag is a view of the key: the refusal starts with the flag as written, the rest is the key's."""
    assert main(["judge", str(tmp_path), "--llm", "m", "--combine", "avg"]) == 2
    assert "--combine avg: expected one of mean, majority, min, max, found 'avg'" in capsys.readouterr().err
    assert main(["judge", str(tmp_path), "--llm", "m", "--set", "judgments.max_doc_tokens=3"]) == 2
    assert "--set judgments.max_doc_tokens=3: expected 16..100000, found 3" in capsys.readouterr().err
    assert main(["judge", str(tmp_path)]) == 2
    assert "--llm: expected the model name the endpoint serves, found none" in capsys.readouterr().err
