"""TSV or CSV with a query, a document id and a grade per row.

The delimiter is a tab when the first line has one, else a comma. With a header line the
columns are found by name (case and ``-``/``_``/space do not matter):

* query id: ``query_id``, ``query-id``, ``qid``, ``topic``, ``topic_id``;
  or, lacking one, the query's text: ``query``, ``query_text``;
* document id: ``doc_id``, ``docid``, ``corpus-id``, ``document_id``, ``docno``;
* grade: ``grade``, ``rating``, ``score``, ``relevance``, ``label``, ``judgment``, ``gain``.

Other columns are ignored, so the judging sheet ``harness pool`` writes (``pool.csv``)
reads back once its ``rating`` column is filled in; a row whose grade is blank is counted
and left out. Without a header the first three columns are query id, document id and grade
(BEIR's ``qrels/*.tsv`` has a header and reads either way).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from indexer.data._judgments._csvrows import csv_rows, delimiter_of
from indexer.data._judgments._format import JudgmentFormat, need_ids, parse_grade
from indexer.data._judgments._model import Judgment, RatedPair
from indexer.data._validate import DataFile, Problems

QUERY_ID = ("query_id", "qid", "queryid", "topic", "topic_id", "q_id")
QUERY_TEXT = ("query", "query_text")
DOC_ID = ("doc_id", "docid", "corpus_id", "document_id", "docno", "document", "pid")
GRADE = ("grade", "rating", "score", "relevance", "label", "judgment", "judgement", "gain", "rel")


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _find(header: list[str], names: tuple[str, ...]) -> int | None:
    cells = [_norm(h) for h in header]
    return next((cells.index(n) for n in names if n in cells), None)


@dataclass(frozen=True, slots=True)
class Columns:
    query: int
    doc: int
    grade: int
    by_text: bool = False


def header_columns(header: list[str]) -> Columns | None:
    """The columns a header names, or ``None`` when the row is not a header we know."""
    qid, text = _find(header, QUERY_ID), _find(header, QUERY_TEXT)
    doc, grade = _find(header, DOC_ID), _find(header, GRADE)
    query = qid if qid is not None else text
    if query is None or doc is None or grade is None:
        return None
    return Columns(query, doc, grade, by_text=qid is None)


def _looks_like_header(row: list[str]) -> bool:
    return len(row) >= 3 and isinstance(parse_grade(row[2]), str)


def sniff(path: Path, head: list[str]) -> bool:
    return True  # the fallback: tried last


def _columns(file: DataFile, row: list[str], line: int, problems: Problems) -> tuple[Columns, bool] | None:
    """The columns to read and whether ``row`` (the first) is a header."""
    found = header_columns(row)
    if found is not None:
        return found, True
    if _looks_like_header(row):
        problems.error(
            "unknown-header",
            file.name,
            line,
            f"expected a header naming a query id ({', '.join(QUERY_ID[:3])}...) or query text "
            f"({', '.join(QUERY_TEXT)}), a document id ({', '.join(DOC_ID[:3])}...) and a grade "
            f"({', '.join(GRADE[:4])}...), found {', '.join(row)}",
        )
        return None
    return Columns(0, 1, 2), False


def read(file: DataFile, problems: Problems) -> Iterator[Judgment | None]:
    with file.open() as fh:
        first = fh.readline().decode("utf-8", errors="replace")
    columns: Columns | None = None
    for line, row in csv_rows(file, problems, delimiter_of(first)):
        if columns is None:
            found = _columns(file, row, line, problems)
            if found is None:
                return
            columns, is_header = found
            if is_header:
                continue
        yield from _row(file, row, line, columns, problems)


def _row(
    file: DataFile, row: list[str], line: int, cols: Columns, problems: Problems
) -> Iterator[Judgment | None]:
    needed = max(cols.query, cols.doc, cols.grade) + 1
    if len(row) < needed:
        problems.error(
            "wrong-column-count", file.name, line, f"expected at least {needed} columns, found {len(row)}"
        )
        return
    query, doc = row[cols.query].strip(), row[cols.doc].strip()
    if not query or not doc:
        problems.error("empty-id", file.name, line, "expected a query and a document id, found an empty one")
        return
    grade = parse_grade(row[cols.grade])
    if isinstance(grade, str):
        problems.error("bad-grade", file.name, line, grade)
        return
    yield None if grade is None else Judgment(query, doc, grade, line, by_text=cols.by_text)


#: the header written: BEIR's ``qrels/*.tsv``
HEADER = ("query-id", "corpus-id", "score")


def render(pairs: Sequence[RatedPair]) -> str:
    """BEIR's qrels TSV (a header, then query id, document id, grade)."""
    need_ids(pairs, "tsv")
    return "\t".join(HEADER) + "\n" + "".join(f"{p.qid}\t{p.doc_id}\t{p.grade}\n" for p in pairs)


FORMAT = JudgmentFormat(
    name="tsv",
    description="TSV or CSV: query id (or query text), document id, grade; a header names the columns",
    sniff=sniff,
    read=read,
    render=render,
    suffix=".tsv",
)
