"""R2MED folder layout (also the layout of the hub repositories ``R2MED/<Name>``).

corpus.jsonl                          {"id", "text"[, "title"]}
query.jsonl                           {"id", "text", ...}
qrels.jsonl                           {"q_id", "p_id", "score"}   or   qrels.txt (TREC: qid iter docid grade)
<method>/<llm>/query_with_hydoc.jsonl {"id", "text", "hy_doc"}    optional expansions
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from indexer.data._assemble import CorpusKeys, Judgment, Layout, assemble
from indexer.data._model import Dataset
from indexer.data._validate import (
    DataFile,
    Problems,
    find_file,
    get_id,
    json_grade,
    json_records,
    require_file,
    text_grade,
    text_lines,
)

FORMAT = "r2med"
CORPUS = "corpus.jsonl"
QUERIES = "query.jsonl"
QRELS_JSONL = "qrels.jsonl"
QRELS_TREC = "qrels.txt"
EXPANSION_FILE = "query_with_hydoc.jsonl"
REQUIRED_FILES = (CORPUS, QUERIES, QRELS_JSONL)


def detect(root: Path) -> bool:
    return find_file(root, QUERIES) is not None


def read_qrels_jsonl(file: DataFile, problems: Problems) -> Iterator[Judgment]:
    for line, obj in json_records(file, problems):
        qid = get_id(obj, "q_id", file, line, problems)
        docid = get_id(obj, "p_id", file, line, problems)
        if "score" not in obj:
            problems.error(
                "missing-grade", file.name, line, 'expected an integer "score", found no such field'
            )
            continue
        grade = json_grade(obj["score"], file, line, problems)
        if qid is not None and docid is not None and grade is not None:
            yield Judgment(qid, docid, grade, line)


def read_qrels_trec(file: DataFile, problems: Problems) -> Iterator[Judgment]:
    for line, text in text_lines(file, problems):
        cols = text.split()
        if len(cols) != 4:
            problems.error(
                "wrong-column-count",
                file.name,
                line,
                f"expected 4 whitespace-separated columns (query-id iteration doc-id grade), found {len(cols)}",
            )
            continue
        grade = text_grade(cols[3], file, line, problems)
        if grade is not None:
            yield Judgment(cols[0], cols[2], grade, line)


def expansion_files(root: Path, *extra: Path) -> tuple[tuple[str, str, DataFile], ...]:
    """``<method>/<llm>/query_with_hydoc.jsonl[.gz]`` under ``root``, then under each ``extra`` folder
    (named by full path in problems, so a reader sees where an added set came from)."""
    found = []
    for base in (root, *extra):
        if not base.is_dir():
            continue
        paths = sorted(base.glob(f"*/*/{EXPANSION_FILE}")) + sorted(base.glob(f"*/*/{EXPANSION_FILE}.gz"))
        for path in paths:
            rel = path.relative_to(base)
            name = rel.as_posix() if base == root else str(path)
            found.append((rel.parts[0], rel.parts[1], DataFile(path, name)))
    return tuple(found)


def load(
    root: Path, *, name: str, source: str, split: str | None = None, expansion_roots: tuple[Path, ...] = ()
) -> Dataset:
    """Load and validate an R2MED-layout folder (R2MED has a single, unnamed split).

    ``expansion_roots``: more folders of ``<method>/<llm>/`` expansion sets (see ``_overlay``).
    """
    problems = Problems()
    if split not in (None, "test"):
        problems.error(
            "unknown-split",
            QUERIES,
            None,
            f'expected no split (R2MED has one evaluation set), found split "{split}"',
        )
    corpus = require_file(root, (CORPUS,), problems)
    queries = require_file(root, (QUERIES,), problems)
    qrels = require_file(root, (QRELS_JSONL, QRELS_TREC), problems)
    if qrels is not None and find_file(root, QRELS_TREC) is not None and qrels.name.startswith(QRELS_JSONL):
        problems.error(
            "ambiguous-qrels", QRELS_TREC, None, f"expected one of {QRELS_JSONL} or {QRELS_TREC}, found both"
        )
    problems.raise_if_errors(f"dataset {name} ({source})")
    assert corpus is not None and queries is not None and qrels is not None
    layout = Layout(
        name=name,
        split=None,
        splits=(),
        source=source,
        format=FORMAT,
        corpus=corpus,
        corpus_keys=CorpusKeys(id="id", text="text", title="title"),
        queries=queries,
        query_id_key="id",
        qrels=qrels,
        read_qrels=read_qrels_jsonl if qrels.name.startswith(QRELS_JSONL) else read_qrels_trec,
        expansions=expansion_files(root, *expansion_roots),
        warn_unjudged=True,
    )
    return assemble(
        layout,
        problems,
        lambda s: load(root, name=name, source=source, split=s, expansion_roots=expansion_roots),
    )


class R2medFormat:
    """The R2MED layout (corpus.jsonl, query.jsonl, qrels.jsonl or qrels.txt, expansion folders)."""

    name = FORMAT
    layout = f"{CORPUS} with {QUERIES} and {QRELS_JSONL}/{QRELS_TREC} (R2MED layout)"

    def detect(self, root: Path) -> bool:
        return detect(root)

    def load(self, root: Path, *, name: str, source: str, split: str | None = None) -> Dataset:
        return load(root, name=name, source=source, split=split)

    def qrels_file(self, root: Path, split: str | None) -> str:
        return QRELS_JSONL if find_file(root, QRELS_JSONL) else QRELS_TREC


R2MED_FORMAT = R2medFormat()
