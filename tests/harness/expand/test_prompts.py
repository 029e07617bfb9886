"""Prompts: our own per method (package resources), replaceable by a user's TOML file, hashed."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError
from harness.expand import GENERATION_METHODS, builtin_prompt, load_prompt


@pytest.mark.parametrize("method", list(GENERATION_METHODS))
def test_builtin_prompts_load_check_and_render(method: str) -> None:
    needs = GENERATION_METHODS[method].needs_first_stage
    prompt = builtin_prompt(method).check(method, needs_passages=needs)
    assert prompt.source == f"builtin:{method}" and len(prompt.sha256) == 64
    messages = prompt.render("Why is the sky blue?", "[1] Rayleigh scattering" if needs else None)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Why is the sky blue?" in messages[1]["content"]
    assert ("[1] Rayleigh scattering" in messages[1]["content"]) is needs
    assert "{" not in messages[1]["content"]


def test_the_three_builtin_prompts_differ() -> None:
    assert len({builtin_prompt(m).sha256 for m in GENERATION_METHODS}) == 3


def test_a_user_prompt_file_replaces_the_builtin(tmp_path: Path) -> None:
    path = tmp_path / "paper.toml"
    path.write_text(
        'user = """Please write a passage to answer the question.\nQuestion: {query}\nPassage:"""\n'
    )
    prompt = load_prompt(path).check("hyde", needs_passages=False)
    assert prompt.source == str(path) and prompt.system == ""
    assert prompt.sha256 != builtin_prompt("hyde").sha256
    assert prompt.render("q?") == [
        {"role": "user", "content": "Please write a passage to answer the question.\nQuestion: q?\nPassage:"}
    ]
    path.write_text('user = "Q: {query} {{literal}}"\n')
    assert load_prompt(path).render("x")[0]["content"] == "Q: x {literal}"


@pytest.mark.parametrize(
    ("text", "method", "needs", "message"),
    [
        ('user = "no placeholder"', "hyde", False, r"expected \{query\} in the user template for hyde"),
        ('user = "{query} {passages}"', "hyde", False, r"found \{passages\}"),
        ('user = "{query}"', "lamer", True, r"expected \{passages\} in the user template for lamer"),
        ('user = "{query} {qeury}"', "hyde", False, r"found \{qeury\}"),
        ('system = "s"', "hyde", False, 'expected a non-empty string "user"'),
        ('user = "{query}"\ntemperature = 0.2', "hyde", False, "found also temperature"),
        ("user = ", "hyde", False, "expected TOML"),
    ],
)
def test_bad_prompt_files_name_the_file_and_the_problem(
    tmp_path: Path, text: str, method: str, needs: bool, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError, match=message) as info:
        load_prompt(path).check(method, needs_passages=needs)
    assert str(path) in str(info.value)
