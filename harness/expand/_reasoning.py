"""Reasoning traces in generated text: which LLM families write one, and how to split it off.

Reasoning models write their thinking into the text before (or around) the answer. R2MED's
evaluation searches only with the answer; so do we. The reasoning is kept apart (records, report):
it is what a user reads when a reasoning model misled retrieval.

``REASONING_FORMATS`` is the table: one row per family, matched on the LLM name (the ``<llm>`` folder
of an expansion set, or the model name given to ``harness expand``) with shell-style patterns. A new
reasoning model is one row. Where a family's marker is missing from a text, the whole text is the
answer (R2MED's evaluation does the same), and no reasoning is recorded for it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass

from base import ConfigError

#: text -> (reasoning or None, answer)
Splitter = Callable[[str], tuple[str | None, str]]


def after_marker(marker: str, opening: str = "") -> Splitter:
    """Reasoning = the text before the first ``marker`` (minus a leading ``opening`` tag); answer = after it.

    A text that opens with ``opening`` but never closes (the model ran out of tokens while thinking)
    is all reasoning, with no answer; R2MED's code would search with it whole, we do not.
    """

    def split(text: str) -> tuple[str | None, str]:
        head, found, tail = text.partition(marker)
        if not found:
            if opening and text.lstrip().startswith(opening):
                return text.lstrip()[len(opening) :].strip() or None, ""
            return None, text.strip()
        reasoning = head.strip()
        if opening and reasoning.startswith(opening):
            reasoning = reasoning[len(opening) :].strip()
        return (reasoning or None), tail.strip()

    return split


def after_heading(answer_heading: str, reasoning_heading: str) -> Splitter:
    """``<reasoning_heading> ... <answer_heading> ...`` (Markdown ``#`` marks allowed around the headings)."""

    def split(text: str) -> tuple[str | None, str]:
        at = text.find(answer_heading)
        if at < 0:
            return None, text.strip()
        head = text[:at].rstrip().rstrip("#").strip()
        head = re.sub(rf"^[#\s]*{re.escape(reasoning_heading)}\s*", "", head)
        return (head or None), text[at + len(answer_heading) :].strip()

    return split


def between_tags(reasoning_tags: tuple[str, str], answer_tags: tuple[str, str]) -> Splitter:
    """Reasoning and answer each wrapped in their own tags; the answer's tags must be there."""
    r_open, r_close = (re.escape(t) for t in reasoning_tags)
    a_open, a_close = (re.escape(t) for t in answer_tags)

    def split(text: str) -> tuple[str | None, str]:
        answer = re.search(rf"{a_open}\s*(.*?)\s*{a_close}", text, re.DOTALL)
        if answer is None:
            return None, text.strip()
        thought = re.search(rf"{r_open}\s*(.*?)\s*{r_close}", text, re.DOTALL)
        reasoning = thought.group(1) if thought else text[: answer.start()].strip()
        return (reasoning or None), answer.group(1).strip()

    return split


@dataclass(frozen=True, slots=True)
class ReasoningFormat:
    """How one family of reasoning models lays out its text."""

    family: str
    patterns: tuple[str, ...]  # shell-style, matched against the lower-cased LLM name
    rule: str  # what is kept, in words (goes into manifests and reports)
    split: Splitter

    def matches(self, llm: str) -> bool:
        name = llm.strip().lower()
        return any(fnmatch.fnmatchcase(name, p) for p in self.patterns)


REASONING_FORMATS: dict[str, ReasoningFormat] = {
    f.family: f
    for f in (
        ReasoningFormat(
            "think-tag",
            ("r1-*", "*deepseek-r1*", "*-r1-distill*", "qwq*", "*/qwq*", "qwen3-*", "*/qwen3-*"),
            "the text after </think> (R1-style: DeepSeek-R1 and its distills, QwQ, Qwen3 thinking)",
            after_marker("</think>", opening="<think>"),
        ),
        ReasoningFormat(
            "huatuo-o1",
            ("huatuo-o1*", "*huatuogpt-o1*"),
            'the text after "Final Response" (HuatuoGPT-o1: "## Thinking ... ## Final Response ...")',
            after_heading("Final Response", "Thinking"),
        ),
        ReasoningFormat(
            "sky-t1",
            ("sky-*", "*sky-t1*"),
            "the text between <|begin_of_solution|> and <|end_of_solution|> (Sky-T1)",
            between_tags(
                ("<|begin_of_thought|>", "<|end_of_thought|>"),
                ("<|begin_of_solution|>", "<|end_of_solution|>"),
            ),
        ),
        ReasoningFormat(
            "answer-tag",
            ("qwen-*b-ins", "*search-r1*"),
            "the text between <answer> and </answer> (Search-R1 agents)",
            between_tags(("<think>", "</think>"), ("<answer>", "</answer>")),
        ),
    )
}
#: choices for ``--reasoning-format``: look the name up in the table, or never split
AUTO, NONE = "auto", "none"


def reasoning_format_for(*names: str) -> ReasoningFormat | None:
    """The first row whose patterns match any of ``names`` (an LLM folder name, a model name)."""
    for name in names:
        for fmt in REASONING_FORMATS.values():
            if name and fmt.matches(name):
                return fmt
    return None


def choose_reasoning_format(choice: str, *names: str) -> ReasoningFormat | None:
    """``auto`` (look ``names`` up), ``none``, or a family name from :data:`REASONING_FORMATS`."""
    if choice == AUTO:
        return reasoning_format_for(*names)
    if choice == NONE:
        return None
    if choice in REASONING_FORMATS:
        return REASONING_FORMATS[choice]
    raise ConfigError(
        f"expected a reasoning format in {', '.join([AUTO, NONE, *REASONING_FORMATS])}, found {choice!r}"
    )
