"""What a judgments file format offers; each format is one module, registered once in ``_registry``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from indexer.data._judgments._model import Judgment
from indexer.data._validate import DataFile, Problems


@dataclass(frozen=True, slots=True)
class JudgmentFormat:
    """A judgments file format: how to recognise it and how to read it (problems at file:line)."""

    name: str
    description: str
    sniff: Callable[[Path, list[str]], bool]
    """Whether a file (its path and first non-blank lines) is in this format."""
    read: Callable[[DataFile, Problems], Iterator[Judgment | None]]
    """Graded pairs in file order; ``None`` for an ungraded row (counted, left out)."""


def parse_grade(text: str) -> int | str | None:
    """A grade from a cell: an int, ``None`` when blank, or a message saying what is wrong."""
    value = text.strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        return f'expected an integer grade, found "{value[:40]}"'
    if not number.is_integer():
        return f"expected an integer grade, found {value}"
    if number < 0:
        return f"expected a non-negative grade, found {value}"
    return int(number)
