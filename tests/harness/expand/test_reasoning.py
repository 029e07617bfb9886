"""The reasoning-trace table: R1-style `</think>`, HuatuoGPT-o1 "Final Response", and the other rows."""

from __future__ import annotations

import pytest

from base import ConfigError
from harness.expand import (
    REASONING_FORMATS,
    ReasoningFormat,
    after_marker,
    choose_reasoning_format,
    reasoning_format_for,
)

R1 = "<think>\nThe patient has a fever and a rash; consider measles.\n</think>\n\nMeasles presents with Koplik spots."
HUATUO = (
    "## Thinking\n\nFever, rash, Koplik spots: measles is likely.\n\n"
    "## Final Response\n\nMeasles (rubeola) presents with Koplik spots."
)


@pytest.mark.parametrize(
    ("llm", "family"),
    [
        ("r1-qwen-32b", "think-tag"),
        ("r1-llama-70b", "think-tag"),
        ("qwq-32b", "think-tag"),
        ("qwen3-32b", "think-tag"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "think-tag"),
        ("huatuo-o1-70b", "huatuo-o1"),
        ("FreedomIntelligence/HuatuoGPT-o1-8B", "huatuo-o1"),
        ("sky-32b", "sky-t1"),
        ("qwen-7b-ins", "answer-tag"),
    ],
)
def test_paper_models_are_in_the_table(llm: str, family: str) -> None:
    fmt = reasoning_format_for(llm)
    assert fmt is not None and fmt.family == family


@pytest.mark.parametrize("llm", ["qwen-7b", "qwen-72b", "llama-70b", "gpt4", "qwen-32b", "test-llm"])
def test_plain_models_are_not_split(llm: str) -> None:
    assert reasoning_format_for(llm) is None


def test_r1_style_keeps_the_text_after_think() -> None:
    trace, answer = REASONING_FORMATS["think-tag"].split(R1)
    assert answer == "Measles presents with Koplik spots."
    assert trace == "The patient has a fever and a rash; consider measles."


def test_huatuo_keeps_the_final_response() -> None:
    trace, answer = REASONING_FORMATS["huatuo-o1"].split(HUATUO)
    assert answer == "Measles (rubeola) presents with Koplik spots."
    assert trace == "Fever, rash, Koplik spots: measles is likely."


def test_a_text_without_the_marker_is_all_answer() -> None:
    for fmt in REASONING_FORMATS.values():
        assert fmt.split("  Plain answer, no trace. ") == (None, "Plain answer, no trace.")


def test_an_unfinished_think_is_all_reasoning() -> None:
    assert REASONING_FORMATS["think-tag"].split("<think>\nstill going") == ("still going", "")


def test_tag_rows() -> None:
    sky = "<|begin_of_thought|>hmm<|end_of_thought|><|begin_of_solution|>Measles.<|end_of_solution|>"
    assert REASONING_FORMATS["sky-t1"].split(sky) == ("hmm", "Measles.")
    r1 = "<think>search first</think><search>rash</search><answer> Measles </answer>"
    assert REASONING_FORMATS["answer-tag"].split(r1) == ("search first", "Measles")


def test_a_new_reasoning_model_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    row = ReasoningFormat("reflect-tag", ("reflector-*",), "after </reflect>", after_marker("</reflect>"))
    monkeypatch.setitem(REASONING_FORMATS, row.family, row)
    fmt = reasoning_format_for("reflector-7b")
    assert fmt is row
    assert fmt.split("why? </reflect> because") == ("why?", "because")


def test_choice_is_validated() -> None:
    assert choose_reasoning_format("none", "r1-qwen-32b") is None
    assert choose_reasoning_format("auto", "r1-qwen-32b") is REASONING_FORMATS["think-tag"]
    assert choose_reasoning_format("huatuo-o1", "whatever") is REASONING_FORMATS["huatuo-o1"]
    with pytest.raises(ConfigError, match="expected a reasoning format in auto, none, think-tag"):
        choose_reasoning_format("thinky")
