"""RRE (Rated Ranking Evaluator) ratings JSON: query groups, their queries and relevant documents.

Judgments are read from every query group, under ``topics[].query_groups[]`` and top-level
``query_groups[]``. A group's ``relevant_documents`` applies to each of its ``queries``,
whose text is the ``$query`` placeholder (or the only placeholder), so queries are matched by
their text. ``relevant_documents`` may take any of RRE's shapes:

* ``{"doc-1": {"gain": 3}, ...}`` (``"rating"`` is read as ``"gain"``);
* ``[{"doc-1": {"gain": 3}}, ...]``;
* ``{"3": ["doc-1", "doc-2"], "1": [...]}``: grade to documents.

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


def _groups(data: Any, file: DataFile, problems: Problems) -> Iterator[Any]:
    if not isinstance(data, dict):
        problems.error("not-an-object", file.name, line_of(data), "expected a JSON object at the top")
        return
    for topic in data.get("topics") or []:
        yield from (topic.get("query_groups") or []) if isinstance(topic, dict) else []
    yield from data.get("query_groups") or []
    if not data.get("topics") and not data.get("query_groups"):
        problems.error(
            "no-query-groups",
            file.name,
            line_of(data),
            f"expected RRE ratings with topics[].query_groups or query_groups, found keys {', '.join(sorted(data))}",
        )


def _query_texts(group: dict[str, Any], file: DataFile, problems: Problems) -> list[str]:
    texts = []
    for query in group.get("queries") or []:
        holders = query.get("placeholders") if isinstance(query, dict) else None
        if not isinstance(holders, dict) or not holders:
            problems.error(
                "no-placeholders",
                file.name,
                line_of(query, line_of(group)),
                "expected a query with placeholders",
            )
            continue
        text = holders.get(PLACEHOLDER, next(iter(holders.values())) if len(holders) == 1 else None)
        if not isinstance(text, str) or not text.strip():
            problems.error(
                "no-query-text",
                file.name,
                line_of(holders),
                f'expected a "{PLACEHOLDER}" placeholder with the query text, found keys {", ".join(holders)}',
            )
            continue
        texts.append(text)
    if not texts:
        problems.error(
            "no-queries", file.name, line_of(group), f"expected queries in group {group.get('name')!r}"
        )
    return texts


def _gain(value: Any) -> Any:
    if isinstance(value, dict):
        return value.get("gain", value.get("rating"))
    return value


def _graded(docs: Any, file: DataFile, problems: Problems) -> Iterator[tuple[str, Any, int]]:
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
        problems.error("bad-documents", file.name, None, f"expected relevant_documents, found {docs!r}"[:120])
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
    for group in _groups(data, file, problems):
        if not isinstance(group, dict):
            continue
        texts = _query_texts(group, file, problems)
        for doc_id, raw, line in _graded(group.get("relevant_documents") or {}, file, problems):
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
