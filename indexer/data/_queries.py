"""Your own queries and judgments: a query file and a judgments file, as a :class:`Dataset` without a corpus.

Query files, by suffix (``QUERY_FORMATS``; ``.gz`` twins too):

* ``.jsonl``: one ``{"_id": ..., "text": ...}`` per line (BEIR's ``queries.jsonl``);
* ``.tsv`` / ``.txt``: ``query id <TAB> text`` per line (TREC topics as MS MARCO writes them).

Judgments: any format :func:`read_judgments` reads (TREC qrels, TSV/CSV, Quepid CSV, RRE JSON).
The corpus is the user's own index, so the dataset holds none (``corpus_size`` 0); the queries
searched are those with judgments, as for every dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from base import ConfigError, DataError
from indexer.data._fingerprint import OrderFreeHash, combine, qrels_hash
from indexer.data._judgments import read_judgments
from indexer.data._model import CorpusStats, Dataset, Document, Fingerprint
from indexer.data._validate import DataFile, Problems, get_id, get_text, json_records, text_lines

QueryReader = Callable[[DataFile, Problems], Iterator[tuple[int, str, str]]]


def _jsonl(file: DataFile, problems: Problems) -> Iterator[tuple[int, str, str]]:
    for line, obj in json_records(file, problems):
        qid = get_id(obj, "_id", file, line, problems)
        text = get_text(obj, "text", file, line, problems)
        if qid is not None and text is not None:
            yield line, qid, text


def _tsv(file: DataFile, problems: Problems) -> Iterator[tuple[int, str, str]]:
    for line, text in text_lines(file, problems):
        qid, tab, query = text.partition("\t")
        if not tab or not qid.strip():
            problems.error(
                "wrong-column-count",
                file.name,
                line,
                f"expected query id <TAB> query text, found {text[:60]!r}",
            )
            continue
        yield line, qid.strip(), query


#: query file formats by suffix
QUERY_FORMATS: dict[str, QueryReader] = {".jsonl": _jsonl, ".tsv": _tsv, ".txt": _tsv}


def read_queries(path: Path | str) -> dict[str, str]:
    """``{query id: text}`` of a query file; every problem named at file:line (a DataError)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"queries file not found: expected a file at {path}")
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    reader = QUERY_FORMATS.get(suffix)
    if reader is None:
        raise ConfigError(
            f"{path}: expected a query file ending in {', '.join(QUERY_FORMATS)} (or .gz), found {suffix or 'no suffix'!r}"
        )
    problems = Problems()
    file = DataFile(path, str(path))
    queries: dict[str, str] = {}
    lines: dict[str, int] = {}
    for line, qid, text in reader(file, problems):
        if qid in queries:
            problems.error(
                "duplicate-id",
                file.name,
                line,
                f'expected unique query ids, found "{qid}" again (first at line {lines[qid]})',
            )
        elif not text.strip():
            problems.error("empty-text", file.name, line, f'expected a non-empty query text for "{qid}"')
        else:
            queries[qid], lines[qid] = text, line
    problems.raise_if_errors(f"queries file {path}")
    return queries


def judged_dataset(name: str, queries_file: Path | str, qrels_file: Path | str) -> Dataset:
    """The judged queries of ``queries_file`` with the judgments of ``qrels_file`` (any judgments format)."""
    queries = read_queries(queries_file)
    judged = read_judgments(qrels_file).qrels(queries)
    qrels = {qid: docs for qid, docs in judged.qrels.items() if any(g > 0 for g in docs.values())}
    if not qrels:
        raise DataError(
            f"{qrels_file}: expected relevant judgments for the queries of {queries_file}, found none"
            + (f" ({judged.unknown_summary(str(qrels_file))})" if judged.unknown else "")
        )
    kept = {qid: queries[qid] for qid in sorted(qrels)}
    h = OrderFreeHash("queries")
    for qid, text in kept.items():
        h.add(qid, text)
    parts = {"corpus": "", "queries": h.hexdigest(), "qrels": qrels_hash(qrels)}
    fingerprint = Fingerprint(expansions="", combined=combine(**parts), **parts)

    def reload(split: str | None) -> Dataset:
        raise ConfigError(f"{name} is a queries file and a judgments file: it has no {split!r} split")

    def corpus() -> Iterator[Document]:
        return iter(())

    return Dataset(
        name=name,
        split=None,
        source=f"{queries_file} + {qrels_file}",
        format="queries+qrels",
        corpus_stats=CorpusStats(0, 0, 0),
        queries=kept,
        qrels=qrels,
        expansions={},
        fingerprint=fingerprint,
        warnings=(),
        unjudged_queries=len(queries) - len(kept),
        splits=(),
        _corpus=corpus,
        _reload=reload,
    )
