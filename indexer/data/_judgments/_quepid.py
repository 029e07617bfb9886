"""Quepid's ratings export (CSV): ``query,docid,rating``, queries named by their text.

This is the layout of Quepid's "basic" export (``/api/export/ratings/<case>.csv``) and of
its ratings import (whose dialog wants exactly these three headers). Quepid writes a query
without ratings as ``text,,``: such rows have no document and are skipped, and a row with a
document but a blank rating is counted as not judged yet. Quepid prefixes a query text that
starts with ``- = + @`` with a space (against spreadsheet formulas); texts are stripped.
Quepid's "detailed" export (``Team Name,Case Name,Case ID,Query Text,Doc ID,Title,Rating,...``)
reads too.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from pathlib import Path

from indexer.data._judgments._csvrows import csv_rows
from indexer.data._judgments._format import JudgmentFormat, need_text, parse_grade
from indexer.data._judgments._model import Judgment, RatedPair
from indexer.data._validate import DataFile, Problems

BASIC = ("query", "docid", "rating")
DETAILED = ("query text", "doc id", "rating")


def _columns(header: list[str]) -> tuple[int, int, int] | None:
    cells = [c.strip().lower() for c in header]
    if tuple(cells[:3]) == BASIC:
        return 0, 1, 2
    if all(name in cells for name in DETAILED):
        return tuple(cells.index(name) for name in DETAILED)  # type: ignore[return-value]
    return None


def sniff(path: Path, head: list[str]) -> bool:
    return bool(head) and _columns(head[0].split(",")) is not None


def read(file: DataFile, problems: Problems) -> Iterator[Judgment | None]:
    columns: tuple[int, int, int] | None = None
    for line, row in csv_rows(file, problems, ","):
        if columns is None:
            columns = _columns(row)
            if columns is None:
                problems.error(
                    "unknown-header",
                    file.name,
                    line,
                    f"expected Quepid's header {','.join(BASIC)} (or its detailed export's "
                    f"{', '.join(DETAILED)}), found {','.join(row)}",
                )
                return
            continue
        yield from _row(file, row, line, columns, problems)


def _row(
    file: DataFile, row: list[str], line: int, columns: tuple[int, int, int], problems: Problems
) -> Iterator[Judgment | None]:
    q, d, r = columns
    cells = row + [""] * (max(columns) + 1 - len(row))
    query, doc = cells[q].strip(), cells[d].strip()
    if not query:
        problems.error("empty-query", file.name, line, "expected a query text, found an empty one")
        return
    if not doc:
        return  # a query without ratings
    grade = parse_grade(cells[r])
    if isinstance(grade, str):
        problems.error("bad-grade", file.name, line, grade)
        return
    yield None if grade is None else Judgment(query, doc, grade, line, by_text=True)


#: a cell starting with one of these is a formula to a spreadsheet: Quepid writes a space before it
FORMULA_STARTS = ("-", "=", "+", "@")


def render(pairs: Sequence[RatedPair]) -> str:
    """Quepid's basic ratings CSV (``query,docid,rating``), as its import dialog takes it."""
    need_text(pairs, "quepid")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(BASIC)
    for p in pairs:
        text = " ".join(p.text.split())
        writer.writerow([" " + text if text.startswith(FORMULA_STARTS) else text, p.doc_id, p.grade])
    return out.getvalue()


FORMAT = JudgmentFormat(
    name="quepid",
    description="Quepid's ratings CSV export: query,docid,rating (queries by text)",
    sniff=sniff,
    read=read,
    render=render,
    suffix=".csv",
)
