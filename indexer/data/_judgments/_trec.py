"""TREC qrels: ``QUERY_ID ITERATION DOC_ID GRADE``, whitespace-separated, one judgment a line.

A line of three columns whose second is ``0`` or ``Q0`` is a pool line not judged yet (the
layout ``harness pool`` writes to ``pool.trec``): it is counted and left out. As trec_eval reads qrels, a
line whose first non-blank character is ``#`` is a comment, and a negative grade is kept (never relevant:
in the pool but not judged).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from indexer.data._judgments._format import JudgmentFormat, need_ids, parse_grade
from indexer.data._judgments._model import Judgment, RatedPair
from indexer.data._validate import DataFile, Problems, text_lines

ITERATIONS = ("0", "Q0")


def sniff(path: Path, head: list[str]) -> bool:
    """The first line has the qrels shape: 4 columns whose second is an iteration (or a 3-column pool line)."""
    if not head:
        return False
    fields = head[0].split()
    if len(fields) == 4:
        return fields[1] in ITERATIONS or fields[1].isdigit()
    return len(fields) == 3 and fields[1] in ITERATIONS


def read(file: DataFile, problems: Problems) -> Iterator[Judgment | None]:
    for line, text in text_lines(file, problems):
        if text.lstrip().startswith("#"):
            continue
        fields = text.split()
        if len(fields) == 3 and fields[1] in ITERATIONS:
            yield None  # a pool line: judged later
            continue
        if len(fields) != 4:
            problems.error(
                "wrong-column-count",
                file.name,
                line,
                f"expected 4 whitespace-separated columns (query-id iteration doc-id grade), found {len(fields)}",
            )
            continue
        grade = parse_grade(fields[3])
        if isinstance(grade, str) or grade is None:
            problems.error("bad-grade", file.name, line, grade or "expected a grade, found none")
            continue
        yield Judgment(fields[0], fields[2], grade, line)


def render(pairs: Sequence[RatedPair]) -> str:
    need_ids(pairs, "trec")
    return "".join(f"{p.qid} 0 {p.doc_id} {p.grade}\n" for p in pairs)


FORMAT = JudgmentFormat(
    name="trec",
    description="TREC qrels: query-id iteration doc-id grade (whitespace-separated)",
    sniff=sniff,
    read=read,
    render=render,
    suffix=".qrels",
)
