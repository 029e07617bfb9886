"""What a judgments file format offers; each format is one module, registered once in ``_registry``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from base import ConfigError
from indexer.data._judgments._model import Judgment, RatedPair
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
    render: Callable[[Sequence[RatedPair]], str]
    """The text of a file in this format holding ``pairs`` (what :func:`write_judgments` writes)."""
    suffix: str = ".txt"
    """The file name ending a file in this format usually has."""


def parse_grade(text: str) -> int | str | None:
    """A grade from a cell: an int, ``None`` when blank, or a message saying what is wrong. A negative grade
    is a grade (TREC Web's -2 junk, trec_eval's own -1): trec_eval reads it as never relevant, in the pool
    but not judged, and so does the harness's scoring."""
    value = text.strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        return f'expected an integer grade, found "{value[:40]}"'
    if not number.is_integer():
        return f"expected an integer grade, found {value}"
    return int(number)


def need_text(pairs: Sequence[RatedPair], format: str) -> None:
    """A format naming queries by their text refuses a pair that has none."""
    bare = next((p for p in pairs if not p.text.strip()), None)
    if bare is not None:
        raise ConfigError(
            f"the {format} format names queries by their text: expected a text for query {bare.qid!r}, "
            "found none (give the dataset or queries the judgments are for)"
        )


def need_ids(pairs: Sequence[RatedPair], format: str, *, numeric: bool = False) -> None:
    """A whitespace-separated format naming queries by id refuses a pair without one, or an id (query or
    document) with a space in it (``numeric``: or a query id that is not an integer)."""
    for p in pairs:
        if not p.qid.strip() or any(c.isspace() for c in p.qid):
            raise ConfigError(
                f"the {format} format names queries by id: expected an id without spaces for query "
                f"{p.text[:60]!r}, found {p.qid!r}"
            )
        if not p.doc_id.strip() or any(c.isspace() for c in p.doc_id):
            raise ConfigError(
                f"the {format} format is whitespace-separated: expected a document id without spaces, "
                f"found {p.doc_id!r}"
            )
        if numeric and not p.qid.isdigit():
            raise ConfigError(
                f"the {format} format's qid:N wants integer query ids, found {p.qid!r} "
                "(write trec, tsv, quepid or rre instead)"
            )
