"""A judge's configuration is validated once, from flags or a table; errors name what the user wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError
from harness.judgments.judge import JudgeOptions, builtin_prompt

TABLE = "exp.toml: [judgments]"


def _key(name: str) -> str:
    return f"{TABLE} {name}"


def test_judges_are_models_times_templates_on_one_scale() -> None:
    spec = JudgeOptions(llm=("m1", "m2"), template=("graded",), llm_url="http://127.0.0.1:9/v1").build()
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
    single = JudgeOptions(llm=("m1",), template=("binary",), combine="max", max_retries=0).build()
    assert (
        single.id == f"m1/{builtin_prompt('binary').sha256[:12]}/binary"
        and single.endpoint.retry.max_retries == 0
    )
    with pytest.raises(ConfigError, match=r"expected every judge on one scale .* found binary, graded"):
        JudgeOptions(llm=("m1",), template=("graded", "binary")).build()
    with pytest.raises(ConfigError, match="expected different judges, found m1/"):
        JudgeOptions(llm=("m1", "m1")).build()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (JudgeOptions(), "expected --llm MODEL"),
        (
            JudgeOptions(llm=("m",), combine="avg"),
            "expected --combine among mean, majority, min, max, found 'avg'",
        ),
        (JudgeOptions(llm=("m",), context_source="web"), "expected --context-source among dataset, index"),
        (
            JudgeOptions(llm=("m",), context_fields=("abstract",)),
            "expected --context-fields among title, text",
        ),
        (
            JudgeOptions(llm=("m",), max_doc_tokens=3),
            "expected --max-doc-tokens between 16 and 100000, found 3",
        ),
        (JudgeOptions(llm=("m",), human_unjudged="one"), "expected --human-unjudged among auto, zero, skip"),
        (JudgeOptions(llm=("m",), template=("nope.toml",)), "cannot read nope.toml"),
        (JudgeOptions(llm=("m",), temperature=3.0), "expected --temperature between 0 and 2, found 3.0"),
    ],
)
def test_a_bad_flag_is_named(options: JudgeOptions, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        options.build()


def test_a_table_gives_the_same_spec_and_its_errors_name_the_key_path(tmp_path: Path) -> None:
    table = {
        "llm": ["m1"],
        "template": "binary",
        "combine": "majority",
        "context_fields": ["title"],
        "max_doc_tokens": 64,
    }
    spec = JudgeOptions.from_table(table, TABLE).build(_key)
    flags = JudgeOptions(
        llm=("m1",), template=("binary",), combine="majority", context_fields=("title",), max_doc_tokens=64
    ).build()
    assert spec.id == flags.id and spec.context == flags.context and spec.combine == "majority"
    with pytest.raises(
        ConfigError, match=r"exp.toml: \[judgments\]: unknown key\(s\) model; expected among llm"
    ):
        JudgeOptions.from_table({"model": "m"}, TABLE)
    with pytest.raises(
        ConfigError, match=r"exp.toml: \[judgments\] max_doc_tokens: expected int, found '64'"
    ):
        JudgeOptions.from_table({"llm": "m", "max_doc_tokens": "64"}, TABLE)
    with pytest.raises(ConfigError, match=r"exp.toml: \[judgments\] llm: expected a list of strings"):
        JudgeOptions.from_table({"llm": ["m", 3]}, TABLE)
    with pytest.raises(ConfigError, match=r"expected exp.toml: \[judgments\] combine among mean"):
        JudgeOptions.from_table({"llm": "m", "combine": "avg"}, TABLE).build(_key)
