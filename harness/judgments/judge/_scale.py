"""Rating scales, and reading a judge's answer strictly: a label on the scale, or a recorded failure.

An answer is accepted in one of two forms, nothing else:

* the label alone (``2``), or
* free text whose *last* line is ``##final score: 2`` (UMBRELA's output form; ``#``, ``##`` or none,
  any case), with no other final-score line before it.

Anything else (``7``, ``2.5``, ``relevant``, ``2 or 3``, two final-score lines, instructions copied
from a document) is a :class:`Parsed` with ``label=None`` and the reason: it is counted as a parse
failure and the pair gets no grade from that judge. No answer is ever mapped to a default grade.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from base import ConfigError

_BARE = re.compile(r"^\s*([+-]?\d+)\s*$")
_FINAL = re.compile(r"^\s*#{0,2}\s*final\s+score\s*:\s*(\S+)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Scale:
    """Integer labels ``0..top``; labels from ``relevant_from`` up count as relevant (binary agreement)."""

    name: str
    top: int
    relevant_from: int
    meaning: tuple[str, ...]

    @property
    def labels(self) -> tuple[int, ...]:
        return tuple(range(self.top + 1))

    def relevant(self, label: int) -> int:
        return int(label >= self.relevant_from)

    def describe(self) -> str:
        return ", ".join(str(label) for label in self.labels)


#: the scales a template may declare
SCALES: dict[str, Scale] = {
    s.name: s
    for s in (
        Scale(
            "graded",
            3,
            2,
            (
                "the passage has nothing to do with the query",
                "the passage seems related to the query but does not answer it",
                "the passage has some answer for the query, but it may be unclear or hidden among extraneous text",
                "the passage is dedicated to the query and contains the exact answer",
            ),
        ),
        Scale("binary", 1, 1, ("not relevant", "relevant")),
    )
}


def scale_named(name: str, where: str) -> Scale:
    found = SCALES.get(name.strip().lower())
    if found is None:
        raise ConfigError(f"{where}: expected a scale among {', '.join(SCALES)}, found {name!r}")
    return found


@dataclass(frozen=True, slots=True)
class Parsed:
    """A judge's answer read strictly: ``label`` on the scale, or ``None`` and ``problem`` saying why."""

    label: int | None
    problem: str = ""


def _token(text: str) -> tuple[str | None, str]:
    """The label's text in the answer, or None and why there is none."""
    if _BARE.match(text):
        return text.strip(), ""
    lines = [line for line in text.splitlines() if line.strip()]
    finals = [i for i, line in enumerate(lines) if _FINAL.match(line)]
    if not finals:
        return None, "no label: expected the label alone or a last line '##final score: N'"
    if len(finals) > 1:
        return None, f"{len(finals)} final-score lines: expected one"
    if finals[0] != len(lines) - 1:
        return None, "the final-score line is not the last line"
    found = _FINAL.match(lines[-1])
    assert found is not None
    return found.group(1), ""


def parse_answer(text: str, scale: Scale) -> Parsed:
    """The label an answer gives on ``scale``, or a parse failure with its reason (never a default)."""
    token, problem = _token(text)
    if token is None:
        return Parsed(None, problem)
    if not re.fullmatch(r"[+-]?\d+", token):
        return Parsed(None, f"{token!r} is not a label on the {scale.name} scale ({scale.describe()})")
    label = int(token)
    if label not in scale.labels:
        return Parsed(None, f"{label} is off the {scale.name} scale ({scale.describe()})")
    return Parsed(label)
