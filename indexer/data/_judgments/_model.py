"""Judgments read from a file: graded (query, document) pairs, each with the line it came from.

A judgments file names its queries either by id (TREC qrels, a TSV/CSV with a query id
column) or by their text (Quepid, RRE): :meth:`Judgments.qrels` maps both onto query ids,
given the queries (``{query id: text}``) of the dataset the judgments are for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from base import ConfigError, DataError

#: how many unknown queries a message names before it says "and N more"
SHOWN = 5


@dataclass(frozen=True, slots=True)
class Judgment:
    """One graded pair; ``query`` is a query id, or a query's text when ``by_text``."""

    query: str
    doc_id: str
    grade: int
    line: int
    by_text: bool = False


@dataclass(frozen=True, slots=True)
class RatedPair:
    """One judgment to write: the query by id and by text (a format takes the one it names queries by)."""

    qid: str
    text: str
    doc_id: str
    grade: int

    def __post_init__(self) -> None:
        if isinstance(self.grade, bool) or not isinstance(self.grade, int):
            raise ConfigError(f"expected an integer grade, found {self.grade!r} for {self.doc_id}")
        if not self.doc_id.strip() or not (self.qid.strip() or self.text.strip()):
            raise ConfigError(
                f"expected a document id and a query id or text, found {self.qid!r}/{self.text!r}/{self.doc_id!r}"
            )


def rated_pairs(qrels: Mapping[str, Mapping[str, int]], queries: Mapping[str, str]) -> list[RatedPair]:
    """Qrels as pairs to write, queries in id order, each query's text from ``queries`` (``""`` when absent)."""
    return [
        RatedPair(qid, queries.get(qid, ""), doc_id, int(grade))
        for qid in sorted(qrels, key=id_order)
        for doc_id, grade in sorted(qrels[qid].items())
    ]


def id_order(qid: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order (2 before 10), then the others in text order."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


@dataclass(frozen=True, slots=True)
class JudgedQrels:
    """Judgments mapped onto query ids: ``qrels[qid][doc_id] = grade``, and those that matched no query."""

    qrels: dict[str, dict[str, int]]
    unknown: tuple[Judgment, ...]

    @property
    def judgments(self) -> int:
        return sum(len(docs) for docs in self.qrels.values())

    def unknown_summary(self, file: str) -> str:
        """``3 judgments for 2 queries not in the dataset (first: file:12 "query text")``, or ``""``."""
        if not self.unknown:
            return ""
        queries = list(dict.fromkeys(j.query for j in self.unknown))
        first = self.unknown[0]
        shown = first.query if len(first.query) <= 60 else first.query[:60] + "…"
        return (
            f"{len(self.unknown)} judgment(s) for {len(queries)} quer{'y' if len(queries) == 1 else 'ies'} "
            f'not in the dataset were left out (first: {file}:{first.line} "{shown}")'
        )


def normalise_text(text: str) -> str:
    """Query texts are matched with runs of whitespace collapsed and the ends stripped."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Judgments:
    """The graded pairs of one judgments file, as read (validated, duplicates resolved)."""

    path: str
    format: str
    items: tuple[Judgment, ...]
    ungraded: int = 0
    """Rows naming a query and a document but no grade yet (a pool not judged yet); left out."""
    sha256: str = ""

    @property
    def by_text(self) -> bool:
        return any(j.by_text for j in self.items)

    def qrels(self, queries: Mapping[str, str] | None = None) -> JudgedQrels:
        """The judgments by query id; those naming a query that ``queries`` lacks are set apart.

        ``queries`` (``{query id: text}``) is needed when the file names queries by their text;
        without it, every judgment by id is kept.
        """
        by_text = self._text_index(queries) if self.by_text else {}
        qrels: dict[str, dict[str, int]] = {}
        unknown: list[Judgment] = []
        for j in self.items:
            qid = by_text.get(normalise_text(j.query)) if j.by_text else j.query
            if qid is None or (queries is not None and qid not in queries):
                unknown.append(j)
                continue
            qrels.setdefault(qid, {})[j.doc_id] = j.grade
        return JudgedQrels(qrels, tuple(unknown))

    def _text_index(self, queries: Mapping[str, str] | None) -> dict[str, str]:
        if queries is None:
            raise ConfigError(
                f"{self.path} names its queries by their text ({self.format} format): expected the "
                "queries of the dataset to map them to query ids, found none"
            )
        index: dict[str, str] = {}
        clashes: dict[str, list[str]] = {}
        for qid, text in queries.items():
            key = normalise_text(text)
            if key in index:
                clashes.setdefault(key, [index[key]]).append(qid)
            index[key] = qid
        used = {normalise_text(j.query) for j in self.items if j.by_text}
        ambiguous = {text: ids for text, ids in clashes.items() if text in used}
        if ambiguous:
            text, ids = next(iter(ambiguous.items()))
            raise DataError(
                f"{self.path}: judgments name queries by text, but {len(ambiguous)} text(s) belong to "
                f'several queries (e.g. "{text[:60]}" is queries {", ".join(ids)}); use a file with query ids'
            )
        return index
