"""Validation shared by every format: line readers that locate problems, and the cross-checks.

A format module describes where its files are and how its records are keyed
(a :class:`Layout`); :func:`assemble` reads everything once, collects every
:class:`Problem`, raises :class:`DataError` if any is an error and only then
builds the :class:`Dataset`, so no partial dataset is ever returned.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from base import DataError
from indexer.data._fingerprint import OrderFreeHash, combine, qrels_hash
from indexer.data._model import (
    CorpusStats,
    Dataset,
    Document,
    ExpansionInfo,
    Fingerprint,
    Problem,
    Severity,
    summarise,
)

MAX_LISTED = 50
_SNIPPET = 60


def snippet(text: str) -> str:
    """A short, quoted excerpt of ``text`` for messages."""
    text = text.strip()
    return json.dumps(text if len(text) <= _SNIPPET else text[:_SNIPPET] + "...", ensure_ascii=False)


def json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number"}
    if value is None:
        return "null"
    if isinstance(value, float):
        return "a number"
    return names.get(type(value), type(value).__name__)


class Problems:
    """Collects problems while files are read."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def error(self, code: str, file: str, line: int | None, message: str) -> None:
        self.items.append(Problem(Severity.ERROR, code, file, line, message))

    def warning(self, code: str, file: str, line: int | None, message: str) -> None:
        self.items.append(Problem(Severity.WARNING, code, file, line, message))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity is Severity.WARNING]

    def raise_if_errors(self, what: str) -> None:
        errors = self.errors
        if not errors:
            return
        warnings = self.warnings
        lines = [str(p) for p in errors[:MAX_LISTED]]
        if len(errors) > MAX_LISTED:
            lines.append(f"... and {len(errors) - MAX_LISTED} more errors")
        if warnings:
            lines.append(f"also {len(warnings)} warning(s):")
            lines.extend(f"  {s}" for s in summarise(warnings))
        head = f"{what} failed validation: {len(errors)} error(s), {len(warnings)} warning(s)"
        raise DataError(head + "\n  " + "\n  ".join(lines), self.items)


@dataclass(frozen=True, slots=True)
class DataFile:
    """A file of a dataset; ``name`` is its path relative to the dataset root, as shown in problems."""

    path: Path
    name: str

    def open(self) -> IO[bytes]:
        if self.path.suffix == ".gz":
            return cast(IO[bytes], gzip.open(self.path, "rb"))
        return self.path.open("rb")

    def stamp(self) -> tuple[int, int]:
        st = self.path.stat()
        return st.st_size, st.st_mtime_ns


def find_file(root: Path, relative: str) -> DataFile | None:
    """``root/relative``, or its gzip-compressed twin ``relative.gz``."""
    for candidate in (relative, relative + ".gz"):
        path = root / candidate
        if path.is_file():
            return DataFile(path, candidate)
    return None


def require_file(root: Path, relatives: tuple[str, ...], problems: Problems) -> DataFile | None:
    """The first of ``relatives`` present under ``root``; otherwise a problem naming what was expected."""
    for relative in relatives:
        found = find_file(root, relative)
        if found is not None:
            return found
    present = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
    expected = " or ".join(relatives)
    problems.error(
        "missing-file",
        relatives[0],
        None,
        f"expected {expected} in {root}, found "
        + (("only " + ", ".join(present)) if present else "an empty or missing folder"),
    )
    return None


def text_lines(file: DataFile, problems: Problems) -> Iterator[tuple[int, str]]:
    """Non-blank lines decoded as UTF-8, numbered from 1; undecodable lines become problems."""
    records = 0
    lineno = 0
    try:
        with file.open() as fh:
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    records += 1
                    problems.error(
                        "undecodable-bytes",
                        file.name,
                        lineno,
                        f"expected UTF-8 text, found byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} "
                        "that is not valid UTF-8",
                    )
                    continue
                if lineno == 1:
                    line = line.removeprefix("\ufeff")
                if not line.strip():
                    problems.warning(
                        "blank-line", file.name, lineno, "expected one record per line, found a blank line"
                    )
                    continue
                records += 1
                yield lineno, line.rstrip("\r\n")
    except (OSError, EOFError, zlib.error) as exc:
        problems.error(
            "unreadable-file",
            file.name,
            lineno + 1,
            f"expected a readable file, found {type(exc).__name__}: {exc}",
        )
        return
    if records == 0:
        problems.error("empty-file", file.name, None, "expected at least one record, found an empty file")


def json_records(file: DataFile, problems: Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """JSON objects, one per line; malformed lines become problems."""
    for lineno, line in text_lines(file, problems):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.error(
                "malformed-json",
                file.name,
                lineno,
                f"expected one JSON object per line, found malformed JSON ({exc.msg} at column {exc.colno}): "
                + snippet(line),
            )
            continue
        if not isinstance(obj, dict):
            problems.error(
                "not-an-object",
                file.name,
                lineno,
                f"expected a JSON object, found {json_type(obj)}: {snippet(line)}",
            )
            continue
        yield lineno, obj


def get_id(obj: dict[str, Any], key: str, file: DataFile, line: int, problems: Problems) -> str | None:
    """A string id; a JSON integer is accepted with a warning, anything else is an error."""
    if key not in obj:
        problems.error(
            "missing-id",
            file.name,
            line,
            f'expected a string field "{key}", found no such field (fields: {", ".join(sorted(obj)) or "none"})',
        )
        return None
    value = obj[key]
    if isinstance(value, str):
        if not value.strip():
            problems.error(
                "empty-id", file.name, line, f'expected a non-empty "{key}", found {json.dumps(value)}'
            )
            return None
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        problems.warning(
            "numeric-id",
            file.name,
            line,
            f'expected a string "{key}", found the number {value}; read as "{value}"',
        )
        return str(value)
    problems.error(
        "bad-id",
        file.name,
        line,
        f'expected a string "{key}", found {json_type(value)}: {snippet(json.dumps(value))}',
    )
    return None


def get_text(
    obj: dict[str, Any], key: str, file: DataFile, line: int, problems: Problems, *, required: bool = True
) -> str | None:
    """A string field; missing optional fields read as ``""``."""
    if key not in obj:
        if not required:
            return ""
        problems.error(
            "missing-text",
            file.name,
            line,
            f'expected a string field "{key}", found no such field (fields: {", ".join(sorted(obj)) or "none"})',
        )
        return None
    value = obj[key]
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        problems.error(
            "bad-text",
            file.name,
            line,
            f'expected a string "{key}", found {json_type(value)}: {snippet(json.dumps(value))}',
        )
        return None
    return value


def json_grade(value: object, file: DataFile, line: int, problems: Problems) -> int | None:
    """A non-negative integer grade from a JSON value."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        problems.error(
            "bad-grade", file.name, line, f"expected a non-negative integer grade, found {json_type(value)}"
        )
        return None
    if isinstance(value, str):
        grade = text_grade(value, file, line, problems)
        if grade is not None:
            problems.warning(
                "string-grade",
                file.name,
                line,
                f"expected an integer grade, found the string {json.dumps(value)}",
            )
        return grade
    if isinstance(value, float):
        if not value.is_integer():
            problems.error(
                "non-integer-grade", file.name, line, f"expected a non-negative integer grade, found {value}"
            )
            return None
        problems.warning(
            "float-grade", file.name, line, f"expected an integer grade, found {value}; read as {int(value)}"
        )
    return _non_negative(int(value), file, line, problems)


def text_grade(value: str, file: DataFile, line: int, problems: Problems) -> int | None:
    """A non-negative integer grade from a TSV/TREC column."""
    try:
        grade = int(value.strip())
    except ValueError:
        problems.error(
            "non-integer-grade",
            file.name,
            line,
            f"expected a non-negative integer grade, found {json.dumps(value)}",
        )
        return None
    return _non_negative(grade, file, line, problems)


def _non_negative(grade: int, file: DataFile, line: int, problems: Problems) -> int | None:
    if grade < 0:
        problems.error(
            "negative-grade", file.name, line, f"expected a non-negative integer grade, found {grade}"
        )
        return None
    return grade


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
