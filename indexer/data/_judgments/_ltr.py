"""The learning-to-rank judgment list (RankLib's, as the Elasticsearch/OpenSearch LTR plugins' demos use it).

    # qid:1: okra and blood sugar
    # qid:2: vitamin d in winter
    3 qid:1 # d1 okra and blood sugar
    0 qid:2 # d9 vitamin d in winter

A data line is ``GRADE qid:N # DOC_ID`` and free text after the document id (the query, or a
title); the header's ``# qid:N: text`` lines say what each query is. Queries are named by id
(``N``, an integer: RankLib's ``qid``). Other ``#`` lines are comments. A line carrying feature
columns (``3 qid:1 1:0.5 2:1.2 # d1``, a training file) reads too: the features are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from indexer.data._judgments._format import JudgmentFormat, need_ids, parse_grade
from indexer.data._judgments._model import Judgment, RatedPair
from indexer.data._validate import DataFile, Problems, text_lines

_LINE = re.compile(r"^\s*(?P<grade>\S+)\s+qid:(?P<qid>\S+)(?:\s+[^#]*)?#\s*(?P<doc>\S+)")
_HEADER = re.compile(r"^\s*#\s*qid:\s*(?P<qid>\d+)\s*:")


def sniff(path: Path, head: list[str]) -> bool:
    return any(_LINE.match(line) or _HEADER.match(line) for line in head)


def read(file: DataFile, problems: Problems) -> Iterator[Judgment | None]:
    for line, text in text_lines(file, problems):
        if text.lstrip().startswith("#"):
            continue  # the header (# qid:N: text) and comments
        found = _LINE.match(text)
        if found is None:
            problems.error(
                "bad-ltr-line",
                file.name,
                line,
                f'expected "GRADE qid:N # DOC_ID [text]", found {text[:60]!r}',
            )
            continue
        grade = parse_grade(found["grade"])
        if isinstance(grade, str) or grade is None:
            problems.error("bad-grade", file.name, line, grade or "expected a grade, found none")
            continue
        yield Judgment(found["qid"], found["doc"], grade, line)


def render(pairs: Sequence[RatedPair]) -> str:
    need_ids(pairs, "ltr", numeric=True)
    texts = {p.qid: " ".join(p.text.split()) for p in pairs}
    header = ["# grade qid:N # doc_id query (a judgment list: RankLib's layout, without features)"]
    header += [f"# qid:{qid}: {text}" for qid, text in texts.items()]
    lines = [f"{p.grade} qid:{p.qid} # {p.doc_id} {texts[p.qid]}".rstrip() for p in pairs]
    return "\n".join(header + lines) + "\n"


FORMAT = JudgmentFormat(
    name="ltr",
    description="LTR judgment list (RankLib): GRADE qid:N # DOC_ID query, with # qid:N: text headers",
    sniff=sniff,
    read=read,
    render=render,
    suffix=".txt",
)
