"""BEIR folder layout.

    corpus.jsonl        {"_id", "title", "text"}
    queries.jsonl       {"_id", "text"}
    qrels/<split>.tsv   query-id <TAB> corpus-id <TAB> score, with a header line
    <method>/<llm>/query_with_hydoc.jsonl   optional expansions, as in R2MED's layout (may cover one split)

Each file may also be gzip-compressed (``corpus.jsonl.gz``), as in the bundled sample.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from indexer.data._assemble import CorpusKeys, Judgment, Layout, assemble
from indexer.data._model import Dataset
from indexer.data._r2med import expansion_files
from indexer.data._validate import (
    DataFile,
    Problems,
    find_file,
    require_file,
    text_grade,
    text_lines,
)

FORMAT = "beir"
CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
DEFAULT_SPLIT = "test"
_HEADER = ("query-id", "corpus-id", "score")


def detect(root: Path) -> bool:
    return find_file(root, QUERIES) is not None or (root / "qrels").is_dir()


def splits(root: Path) -> tuple[str, ...]:
    folder = root / "qrels"
    if not folder.is_dir():
        return ()
    names = {p.name.removesuffix(".gz").removesuffix(".tsv") for p in folder.iterdir() if ".tsv" in p.name}
    return tuple(sorted(names))


def read_qrels_tsv(file: DataFile, problems: Problems) -> Iterator[Judgment]:
    for line, text in text_lines(file, problems):
        cols = text.split("\t")
        if line == 1 and tuple(c.strip().lower() for c in cols) == _HEADER:
            continue
        if len(cols) != 3:
            problems.error(
                "wrong-column-count",
                file.name,
                line,
                f"expected 3 tab-separated columns (query-id, corpus-id, score), found {len(cols)}",
            )
            continue
        qid, docid = cols[0].strip(), cols[1].strip()
        if not qid or not docid:
            problems.error(
                "empty-id", file.name, line, "expected a query id and a document id, found an empty one"
            )
            continue
        grade = text_grade(cols[2], file, line, problems)
        if grade is not None:
            yield Judgment(qid, docid, grade, line)


def load(
    root: Path, *, name: str, source: str, split: str | None = None, expansion_roots: tuple[Path, ...] = ()
) -> Dataset:
    """Load and validate a BEIR-layout folder for one split (default ``test``).

    ``expansion_roots``: more folders of ``<method>/<llm>/`` expansion sets (see ``_overlay``).
    """
    problems = Problems()
    chosen = split or DEFAULT_SPLIT
    available = splits(root)
    corpus = require_file(root, (CORPUS,), problems)
    queries = require_file(root, (QUERIES,), problems)
    qrels = find_file(root, f"qrels/{chosen}.tsv")
    if qrels is None:
        problems.error(
            "missing-file",
            f"qrels/{chosen}.tsv",
            None,
            f'expected qrels/{chosen}.tsv for split "{chosen}" in {root}, found splits: '
            + (", ".join(available) or "none"),
        )
    problems.raise_if_errors(f"dataset {name} ({source})")
    assert corpus is not None and queries is not None and qrels is not None
    layout = Layout(
        name=name,
        split=chosen,
        splits=available,
        source=source,
        format=FORMAT,
        corpus=corpus,
        corpus_keys=CorpusKeys(id="_id", text="text", title="title"),
        queries=queries,
        query_id_key="_id",
        qrels=qrels,
        read_qrels=read_qrels_tsv,
        expansions=expansion_files(root, *expansion_roots),
        warn_unjudged=False,
        expansions_cover_split=False,
    )
    return assemble(
        layout,
        problems,
        lambda s: load(root, name=name, source=source, split=s, expansion_roots=expansion_roots),
    )


class BeirFormat:
    """The BEIR layout (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)."""

    name = FORMAT
    layout = f"{CORPUS} with {QUERIES} and qrels/<split>.tsv (BEIR layout)"

    def detect(self, root: Path) -> bool:
        return detect(root)

    def load(self, root: Path, *, name: str, source: str, split: str | None = None) -> Dataset:
        return load(root, name=name, source=source, split=split)

    def qrels_file(self, root: Path, split: str | None) -> str:
        return f"qrels/{split or DEFAULT_SPLIT}.tsv"


BEIR_FORMAT = BeirFormat()
