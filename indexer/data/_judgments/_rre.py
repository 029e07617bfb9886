"""RRE (Rated Ranking Evaluator) ratings JSON: queries, their query groups and relevant documents.

Judgments are read from every level RRE and Quepid write (RRE's ``topics`` and ``query_groups``
levels are optional):

* query groups, under ``topics[].query_groups[]`` and top-level ``query_groups[]``: a group's
  ``relevant_documents`` applies to each of its ``queries``; a query of a group that carries its
  own ``relevant_documents`` is judged by those as well (for its text only);
* top-level ``queries[]``, each with its own ``relevant_documents``: Quepid's RRE export.

A query's text is its ``$query`` placeholder (or its only placeholder), so queries are matched by
their text. ``relevant_documents`` may take any of RRE's shapes:

* ``{"doc-1": {"gain": 3}, ...}`` (``"rating"`` is read as ``"gain"``);
* ``[{"doc-1": {"gain": 3}}, ...]``;
* ``{"3": ["doc-1", "doc-2"], "1": [...]}``: grade to documents (Quepid's export).

Problems name the line of the JSON object they are in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from indexer.data._judgments import _located_json
from indexer.data._judgments._format import JudgmentFormat, need_text, parse_grade
from indexer.data._judgments._located_json import line_of
from indexer.data._judgments._model import Judgment, RatedPair
from indexer.data._validate import DataFile, Problems

PLACEHOLDER = "$query"


def sniff(path: Path, head: list[str]) -> bool:
    return path.suffix.lower() == ".json" or bool(head and head[0].lstrip().startswith("{"))


def _load(file: DataFile, problems: Problems) -> Any:
    try:
        with file.open() as fh:
            text = fh.read().decode("utf-8-sig")
        return _located_json.loads(text)
    except UnicodeDecodeError as exc:
        problems.error("undecodable-bytes", file.name, None, f"expected UTF-8 JSON, found {exc.reason}")
    except json.JSONDecodeError as exc:
        problems.error("malformed-json", file.name, exc.lineno, f"expected RRE ratings JSON, found {exc.msg}")
    except OSError as exc:
        problems.error("unreadable-file", file.name, None, f"expected a readable file, found {exc}")
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, dict | list):
        return "an object" if isinstance(value, dict) else "a list"
    return repr(value)[:60]


def _listed(data: dict[str, Any], key: str, file: DataFile, problems: Problems) -> list[Any]:
    """``data[key]`` when it is a list (absent: empty); anything else is an error, not skipped."""
    value = data.get(key)
    if value is None or isinstance(value, list):
        return value or []
    problems.error(
        f"bad-{key.replace('_', '-')}",
        file.name,
        line_of(value, line_of(data)),
        f"expected {key} to be a list, found {_json_type(value)}",
    )
    return []


def _groups(data: dict[str, Any], file: DataFile, problems: Problems) -> Iterator[Any]:
    for topic in _listed(data, "topics", file, problems):
        if isinstance(topic, dict):
            yield from _listed(topic, "query_groups", file, problems)
        else:
            problems.error(
                "bad-topic", file.name, line_of(data), f"expected a topic object, found {topic!r}"[:160]
            )
    yield from _listed(data, "query_groups", file, problems)


def _query_text(query: Any, at: int, file: DataFile, problems: Problems) -> str | None:
    holders = query.get("placeholders") if isinstance(query, dict) else None
    if not isinstance(holders, dict) or not holders:
        problems.error("no-placeholders", file.name, line_of(query, at), "expected a query with placeholders")
        return None
    text = holders.get(PLACEHOLDER, next(iter(holders.values())) if len(holders) == 1 else None)
    if not isinstance(text, str) or not text.strip():
        problems.error(
            "no-query-text",
            file.name,
            line_of(holders),
            f'expected a "{PLACEHOLDER}" placeholder with the query text, found keys {", ".join(holders)}',
        )
        return None
    return text


def _group_units(group: Any, file: DataFile, problems: Problems) -> Iterator[tuple[list[str], Any, int]]:
    """A group's documents for all its queries, then each query's own documents for that query."""
    if not isinstance(group, dict):
        problems.error("bad-group", file.name, None, f"expected a query group object, found {group!r}"[:160])
        return
    queries = [(q, _query_text(q, line_of(group), file, problems)) for q in group.get("queries") or []]
    texts = [text for _, text in queries if text is not None]
    if not texts:
        problems.error(
            "no-queries", file.name, line_of(group), f"expected queries in group {group.get('name')!r}"
        )
    yield texts, group.get("relevant_documents") or {}, line_of(group)
    for query, text in queries:
        if text is not None and query.get("relevant_documents"):
            yield [text], query["relevant_documents"], line_of(query)


def _units(data: Any, file: DataFile, problems: Problems) -> Iterator[tuple[list[str], Any, int]]:
    """(query texts, the relevant_documents that judge them, line) from every level of the file."""
    if not isinstance(data, dict):
        problems.error("not-an-object", file.name, line_of(data), "expected a JSON object at the top")
        return
    if not any(data.get(key) for key in ("topics", "query_groups", "queries")):
        problems.error(
            "no-queries",
            file.name,
            line_of(data),
            "expected RRE ratings with topics[].query_groups, query_groups or queries (Quepid's export), "
            f"found keys {', '.join(sorted(data)) or 'none'}",
        )
        return
    for group in _groups(data, file, problems):
        yield from _group_units(group, file, problems)
    for query in _listed(data, "queries", file, problems):  # Quepid: each query with its own documents
        text = _query_text(query, line_of(data), file, problems)
        if text is not None:
            yield [text], query.get("relevant_documents") or {}, line_of(query)


def _gain(value: Any) -> Any:
    if isinstance(value, dict):
        return value.get("gain", value.get("rating"))
    return value


def _graded(docs: Any, at: int, file: DataFile, problems: Problems) -> Iterator[tuple[str, Any, int]]:
    """(document id, raw gain, line) from any of RRE's ``relevant_documents`` shapes."""
    if isinstance(docs, list):
        for entry in docs:
            if not isinstance(entry, dict):
                problems.error(
                    "bad-document", file.name, line_of(docs), f"expected {{doc: {{gain}}}}, found {entry!r}"
                )
                continue
            for doc_id, value in entry.items():
                yield doc_id, _gain(value), line_of(value, line_of(entry))
        return
    if not isinstance(docs, dict):
        problems.error("bad-documents", file.name, at, f"expected relevant_documents, found {docs!r}"[:120])
        return
    for key, value in docs.items():
        if isinstance(value, list):  # grade -> documents
            yield from ((str(doc_id), key, line_of(value, line_of(docs))) for doc_id in value)
        else:
            yield key, _gain(value), line_of(value, line_of(docs))


def read(file: DataFile, problems: Problems) -> Iterator[Judgment | None]:
    data = _load(file, problems)
    if data is None:
        return
    for texts, docs, at in _units(data, file, problems):
        for doc_id, raw, line in _graded(docs, at, file, problems):
            grade = (
                parse_grade(str(raw))
                if isinstance(raw, int | float | str) and not isinstance(raw, bool)
                else None
            )
            if not isinstance(grade, int):
                problems.error(
                    "bad-grade",
                    file.name,
                    line,
                    f'document "{doc_id}": expected an integer gain, found {raw!r}',
                )
                continue
            for text in texts:
                yield Judgment(text, str(doc_id), grade, line, by_text=True)


def _group(text: str, pairs: list[RatedPair]) -> dict[str, Any]:
    return {
        "name": text,
        "queries": [{"template": "only_q.json", "placeholders": {PLACEHOLDER: text}}],
        "relevant_documents": {p.doc_id: {"gain": p.grade} for p in pairs},
    }


def render(pairs: Sequence[RatedPair]) -> str:
    """RRE ratings: one query group per query, documents in the per-document shape (``{doc: {"gain": g}}``,
    the shape quepid#928 settled on); the index and corpus are RRE's configuration, to add there."""
    need_text(pairs, "rre")
    groups: dict[str, list[RatedPair]] = {}
    for p in pairs:
        groups.setdefault(p.text, []).append(p)
    body = {"id_field": "id", "query_groups": [_group(text, items) for text, items in groups.items()]}
    return json.dumps(body, ensure_ascii=False, indent=2) + "\n"


FORMAT = JudgmentFormat(
    name="rre",
    description="RRE ratings JSON: query groups with $query placeholders and relevant_documents gains",
    sniff=sniff,
    read=read,
    render=render,
    suffix=".json",
)
