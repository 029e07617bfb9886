"""A dataset folder read once and checked across its files, then built (or refused whole).

A format module describes where its files are and how its records are keyed (a :class:`Layout`);
:func:`assemble` reads everything once, collects every :class:`Problem`, raises :class:`DataError` if any
is an error and only then builds the :class:`Dataset`, so no partial dataset is ever returned. The line
readers it uses are :mod:`indexer.data._validate`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from base import DataError
from indexer.data._fingerprint import OrderFreeHash, combine, qrels_hash
from indexer.data._model import (
    CorpusStats,
    Dataset,
    Document,
    ExpansionInfo,
    Fingerprint,
)
from indexer.data._validate import (
    DataFile,
    Problems,
    get_id,
    get_text,
    json_records,
)


@dataclass(frozen=True, slots=True)
class Judgment:
    qid: str
    docid: str
    grade: int
    line: int


QrelsReader = Callable[[DataFile, Problems], Iterator[Judgment]]


@dataclass(frozen=True, slots=True)
class CorpusKeys:
    id: str
    text: str
    title: str


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a format keeps its files and how its records are keyed."""

    name: str
    split: str | None
    splits: tuple[str, ...]
    source: str
    format: str
    corpus: DataFile
    corpus_keys: CorpusKeys
    queries: DataFile
    query_id_key: str
    qrels: DataFile
    read_qrels: QrelsReader
    expansions: tuple[tuple[str, str, DataFile], ...] = ()
    # R2MED query files hold exactly the evaluated queries: an unjudged one is worth a warning.
    # BEIR query files hold every split's queries: the other splits' queries are expected.
    warn_unjudged: bool = True
    # R2MED: an expansion set covers every judged query (one split). BEIR: a set may cover one split
    # only (a run that uses it still refuses a missing query), so a gap is a warning.
    expansions_cover_split: bool = True


def parse_document(
    obj: dict[str, Any], keys: CorpusKeys, file: DataFile, line: int, problems: Problems
) -> Document | None:
    doc_id = get_id(obj, keys.id, file, line, problems)
    text = get_text(obj, keys.text, file, line, problems)
    title = get_text(obj, keys.title, file, line, problems, required=False)
    if doc_id is None or text is None or title is None:
        return None
    return Document(doc_id, text, title)


def stream_documents(file: DataFile, keys: CorpusKeys, stamp: tuple[int, int]) -> Iterator[Document]:
    """Re-read an already validated corpus; refuses a file that changed since validation."""
    if file.stamp() != stamp:
        raise DataError(
            f"{file.path} changed on disk since it was validated (expected size/mtime {stamp}, "
            f"found {file.stamp()}); load the dataset again"
        )
    with file.open() as fh:
        for raw in fh:
            line = raw.decode("utf-8").removeprefix("\ufeff")
            if not line.strip():
                continue
            obj = json.loads(line)
            doc_id = obj[keys.id]
            yield Document(str(doc_id), obj[keys.text], obj.get(keys.title) or "")


@dataclass(slots=True)
class _Corpus:
    """What one streaming pass over the corpus found: ids by line, a content hash, counts."""

    lines: dict[str, int]
    hash: OrderFreeHash
    words: int = 0
    with_title: int = 0


def _read_queries(layout: Layout, problems: Problems) -> dict[str, tuple[str, int]]:
    """Query id -> (text, line); duplicates and empty texts reported."""
    qfile = layout.queries
    queries: dict[str, tuple[str, int]] = {}
    for line, obj in json_records(qfile, problems):
        qid = get_id(obj, layout.query_id_key, qfile, line, problems)
        text = get_text(obj, "text", qfile, line, problems)
        if qid is None or text is None:
            continue
        if qid in queries:
            problems.error(
                "duplicate-id",
                qfile.name,
                line,
                f'expected unique query ids, found "{qid}" again (first at line {queries[qid][1]})',
            )
            continue
        if not text.strip():
            problems.error(
                "empty-text", qfile.name, line, f'expected a non-empty query text for "{qid}", found ""'
            )
        queries[qid] = (text, line)

    return queries


def _read_qrels(layout: Layout, problems: Problems) -> dict[str, dict[str, Judgment]]:
    """Query id -> document id -> judgment; duplicates, conflicts and zero grades reported."""
    judged: dict[str, dict[str, Judgment]] = {}
    for j in layout.read_qrels(layout.qrels, problems):
        docs = judged.setdefault(j.qid, {})
        previous = docs.get(j.docid)
        if previous is not None:
            if previous.grade == j.grade:
                problems.warning(
                    "duplicate-judgment",
                    layout.qrels.name,
                    j.line,
                    f'expected one judgment per (query, document), found ("{j.qid}", "{j.docid}") again '
                    f"with the same grade (first at line {previous.line})",
                )
            else:
                problems.error(
                    "conflicting-judgment",
                    layout.qrels.name,
                    j.line,
                    f'expected one judgment per (query, document), found ("{j.qid}", "{j.docid}") graded '
                    f"{j.grade} here and {previous.grade} at line {previous.line}",
                )
            continue
        if j.grade == 0:
            problems.warning(
                "zero-grade",
                layout.qrels.name,
                j.line,
                f'expected a positive grade, found 0 for ("{j.qid}", "{j.docid}"); kept as non-relevant',
            )
        docs[j.docid] = j
    return judged


def _check_judged_queries(
    layout: Layout,
    queries: dict[str, tuple[str, int]],
    judged: dict[str, dict[str, Judgment]],
    problems: Problems,
) -> None:
    """Judged queries must exist; queries without any judgment (or only grade 0) are reported."""
    qfile = layout.queries
    for qid, docs in judged.items():
        if qid not in queries:
            first = min(docs.values(), key=lambda x: x.line)
            problems.error(
                "unknown-query",
                layout.qrels.name,
                first.line,
                f'expected every judged query in {qfile.name}, found query "{qid}" judged here but missing there',
            )
        elif not any(j.grade > 0 for j in docs.values()):
            first = min(docs.values(), key=lambda x: x.line)
            problems.warning(
                "no-relevant-document",
                layout.qrels.name,
                first.line,
                f'expected at least one positive grade for query "{qid}", found only grade 0',
            )
    for qid, (_, line) in queries.items():
        if qid not in judged and layout.warn_unjudged:
            problems.warning(
                "unjudged-query",
                qfile.name,
                line,
                f'expected judgments for query "{qid}" in {layout.qrels.name}, found none; left out of evaluation',
            )


def _scan_corpus(layout: Layout, judged: dict[str, dict[str, Judgment]], problems: Problems) -> _Corpus:
    """One streaming pass: ids, hash and counts; judged documents missing from the corpus reported."""
    cfile = layout.corpus
    found = _Corpus({}, OrderFreeHash("corpus"))
    doc_lines = found.lines
    for line, obj in json_records(cfile, problems):
        doc = parse_document(obj, layout.corpus_keys, cfile, line, problems)
        if doc is None:
            continue
        if doc.id in doc_lines:
            problems.error(
                "duplicate-id",
                cfile.name,
                line,
                f'expected unique document ids, found "{doc.id}" again (first at line {doc_lines[doc.id]})',
            )
            continue
        doc_lines[doc.id] = line
        if not doc.text.strip() and not doc.title.strip():
            problems.warning(
                "empty-document",
                cfile.name,
                line,
                f'expected document text for "{doc.id}", found an empty text',
            )
        found.hash.add(doc.id, doc.title, doc.text)
        found.words += len(doc.title.split()) + len(doc.text.split())
        found.with_title += bool(doc.title)
    for docs in judged.values():
        for j in docs.values():
            if j.docid not in doc_lines:
                problems.warning(
                    "unknown-document",
                    layout.qrels.name,
                    j.line,
                    f'expected a document id from {cfile.name}, found "{j.docid}"; the judgment is kept '
                    "(it counts in the ideal ranking) but can never be retrieved",
                )

    return found


def _read_expansions(
    layout: Layout, queries: dict[str, tuple[str, int]], evaluated: list[str], problems: Problems
) -> tuple[dict[tuple[str, str], dict[str, str]], dict[tuple[str, str], ExpansionInfo]]:
    """(method, llm) -> query id -> generated text, for every expansion file of the layout; and what
    else each set carries (reasoning kept apart, prompt hashes)."""
    expansions: dict[tuple[str, str], dict[str, str]] = {}
    info: dict[tuple[str, str], ExpansionInfo] = {}
    for method, llm, efile in layout.expansions:
        if (method, llm) in expansions:
            problems.error(
                "duplicate-expansion",
                efile.name,
                None,
                f"expected one {method}/{llm} expansion set, found a second one here "
                f"(first: {info[(method, llm)].file})",
            )
            continue
        texts, reasoning, prompts = _read_expansion_file(efile, queries, evaluated, layout, problems)
        expansions[(method, llm)] = texts
        info[(method, llm)] = ExpansionInfo(efile.name, reasoning, prompts)
    return expansions, info


def _expansion_extras(obj: dict[str, Any], efile: DataFile, line: int, problems: Problems) -> tuple[str, str]:
    """The optional ``reasoning`` text and ``generation.prompt_sha256`` of one expansion record."""
    reasoning = get_text(obj, "reasoning", efile, line, problems, required=False) or ""
    generation = obj.get("generation")
    prompt = generation.get("prompt_sha256") if isinstance(generation, dict) else None
    return reasoning, prompt if isinstance(prompt, str) else ""


def _read_expansion_file(
    efile: DataFile,
    queries: dict[str, tuple[str, int]],
    evaluated: list[str],
    layout: Layout,
    problems: Problems,
) -> tuple[dict[str, str], dict[str, str], tuple[str, ...]]:
    """(texts, reasoning traces, prompt hashes) of one expansion file, for the evaluated queries."""
    qname = layout.queries.name
    seen: dict[str, int] = {}
    texts: dict[str, str] = {}
    reasoning: dict[str, str] = {}
    prompts: set[str] = set()
    for line, obj in json_records(efile, problems):
        qid = get_id(obj, "id", efile, line, problems)
        hy_doc = get_text(obj, "hy_doc", efile, line, problems)
        if qid is None or hy_doc is None:
            continue
        if qid not in queries:
            problems.error(
                "unknown-query",
                efile.name,
                line,
                f'expected a query id from {qname}, found "{qid}" which is not there',
            )
            continue
        if qid in seen:
            problems.error(
                "duplicate-id",
                efile.name,
                line,
                f'expected one expansion per query, found "{qid}" again (first at line {seen[qid]})',
            )
            continue
        seen[qid] = line
        if not hy_doc.strip():
            problems.error(
                "empty-text", efile.name, line, f'expected a non-empty "hy_doc" for "{qid}", found ""'
            )
        query_text = obj.get("text")
        if isinstance(query_text, str) and query_text != queries[qid][0]:
            problems.warning(
                "expansion-text-differs",
                efile.name,
                line,
                f'expected "text" to repeat query "{qid}" from {qname}, found a different text',
            )
        texts[qid] = hy_doc
        trace, prompt = _expansion_extras(obj, efile, line, problems)
        if trace.strip():
            reasoning[qid] = trace
        if prompt:
            prompts.add(prompt)
    report = problems.error if layout.expansions_cover_split else problems.warning
    for qid in evaluated:
        if qid not in seen:
            report(
                "missing-expansion",
                qname,
                queries[qid][1],
                f'expected an expansion in {efile.name} for judged query "{qid}", found none',
            )
    kept = [qid for qid in evaluated if qid in texts]
    return (
        {q: texts[q] for q in kept},
        {q: reasoning[q] for q in kept if q in reasoning},
        tuple(sorted(prompts)),
    )


def _fingerprint(
    corpus: _Corpus,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    expansions: dict[tuple[str, str], dict[str, str]],
) -> Fingerprint:
    qh, eh = OrderFreeHash("queries"), OrderFreeHash("expansions")
    for qid, text in queries.items():
        qh.add(qid, text)
    for (method, llm), per_query in expansions.items():
        for qid, text in per_query.items():
            eh.add(method, llm, qid, text)
    parts = {"corpus": corpus.hash.hexdigest(), "queries": qh.hexdigest(), "qrels": qrels_hash(qrels)}
    return Fingerprint(expansions=eh.hexdigest(), combined=combine(**parts), **parts)


def assemble(layout: Layout, problems: Problems, reload: Callable[[str | None], Dataset]) -> Dataset:
    """Read and cross-check every file of ``layout``; raise DataError on any error, else build the Dataset."""
    queries = _read_queries(layout, problems)
    judged = _read_qrels(layout, problems)
    _check_judged_queries(layout, queries, judged, problems)
    stamp = layout.corpus.stamp()
    corpus = _scan_corpus(layout, judged, problems)
    evaluated = [qid for qid in queries if qid in judged]
    expansions, expansion_info = _read_expansions(layout, queries, evaluated, problems)
    problems.raise_if_errors(f"dataset {layout.name} ({layout.source})")

    out_queries = {qid: queries[qid][0] for qid in evaluated}
    qrels = {qid: {d: j.grade for d, j in judged[qid].items()} for qid in evaluated}
    cfile, keys = layout.corpus, layout.corpus_keys
    return Dataset(
        name=layout.name,
        split=layout.split,
        source=layout.source,
        format=layout.format,
        corpus_stats=CorpusStats(
            documents=len(corpus.lines), words=corpus.words, with_title=corpus.with_title
        ),
        queries=out_queries,
        qrels=qrels,
        expansions=expansions,
        expansion_info=expansion_info,
        fingerprint=_fingerprint(corpus, out_queries, qrels, expansions),
        warnings=tuple(problems.warnings),
        unjudged_queries=len(queries) - len(evaluated),
        splits=layout.splits,
        _corpus=lambda: stream_documents(cfile, keys, stamp),
        _reload=reload,
    )
