"""Query templates: mustache, as Elasticsearch and OpenSearch search templates write it, rendered here.

A template is parsed once (:meth:`QueryTemplate.parse`): a syntax error, a partial, or a
variable that neither the harness nor the arm's ``params`` provide is an error before any
search is sent (mustache libraries render a missing name as empty text; we refuse it).

Rendering (:meth:`QueryTemplate.render`) follows the engines' JSON escaping:

* ``{{name}}`` of a string writes its JSON-escaped content *without* quotes, so a template
  writes ``"query": "{{query}}"`` (as in an Elasticsearch search template);
* ``{{name}}`` of a number, boolean, list or table writes its JSON (``"size": {{size}}``,
  ``"query_vector": {{query_vector}}``, ``"fields": {{fields}}``);
* ``{{{name}}}`` writes the value raw (a string's characters unescaped);
* sections (``{{#boost}}...{{/boost}}``, ``{{^boost}}...{{/boost}}``) work as in mustache.

The rendered text must be one JSON object: the search body.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pystache
from pystache.context import KeyNotFoundError
from pystache.parser import ParsingError

from base import ConfigError

#: the variables the harness fills for every query (query_vector and vector_field: arms with a model)
HARNESS_VARIABLES: dict[str, str] = {
    "query": "the query text, JSON-escaped (write it inside quotes)",
    "query_id": "the query id, JSON-escaped",
    "query_vector": "the query's embedding as a JSON array (arms with a model)",
    "vector_field": "the harness index's vector field of the arm's model (arms with a model)",
    "size": "results per query (the run's depth)",
    "k": "kNN neighbours (the run's depth)",
    "num_candidates": "kNN candidates (default max(10 x depth, 100), at most 10000)",
}
VECTOR_VARIABLES = frozenset({"query_vector", "vector_field"})


class _Json(str):
    """A value already written as JSON: interpolated as it is; a section over it follows the value's truth."""

    truthy: bool

    def __new__(cls, value: Any) -> _Json:
        made = super().__new__(cls, json.dumps(value, ensure_ascii=False))
        made.truthy = bool(value)
        return made

    def __bool__(self) -> bool:
        return self.truthy


def _escape(text: str) -> str:
    return text if isinstance(text, _Json) else json.dumps(text, ensure_ascii=False)[1:-1]


def _context_value(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping | list | tuple | int | float | bool) or value is None:
        return _Json(value)
    raise ConfigError(f"expected a template value of JSON type, found {type(value).__name__}")


def _names(tree: Any, depth: int = 0) -> Iterator[tuple[str, int]]:
    """Every tag name of a parsed template, with its section depth (names in sections may be item fields)."""
    for node in getattr(tree, "_parse_tree", ()):
        kind = type(node).__name__
        key = getattr(node, "key", None)
        if kind == "_PartialNode":
            raise ConfigError(
                f"expected no partials ({{{{> {key}}}}}) in a template: they cannot be resolved"
            )
        if key is not None and key != ".":
            yield key.split(".")[0], depth
        if kind in {"_SectionNode", "_InvertedNode"}:
            yield from _names(node.parsed if kind == "_SectionNode" else node.parsed_section, depth + 1)


def template_names(text: str, source: str) -> list[tuple[str, int]]:
    """Every tag name of a mustache ``text`` with its section depth (0: top level); a ConfigError naming
    ``source`` when it does not parse or has a partial."""
    try:
        tree = pystache.parse(text, raise_on_mismatch=True)
    except ParsingError as exc:
        raise ConfigError(f"{source}: expected a mustache template, it does not parse: {exc}") from None
    try:
        return list(_names(tree))
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


@dataclass(frozen=True, slots=True)
class QueryTemplate:
    """A parsed mustache template; ``source`` names where it came from (a file, or ``inline``)."""

    text: str
    source: str
    variables: frozenset[str]

    @classmethod
    def parse(cls, text: str, source: str, known: set[str] | frozenset[str]) -> QueryTemplate:
        """Parse ``text``; every top-level tag must be one of ``known`` (a ConfigError names the others)."""
        names = template_names(text, source)
        unknown = sorted({name for name, depth in names if depth == 0 and name not in known})
        if unknown:
            raise ConfigError(
                f"{source}: unknown template variable(s) {', '.join(unknown)}: expected the harness's "
                f"({', '.join(HARNESS_VARIABLES)}) or the arm's params ({', '.join(sorted(set(known) - set(HARNESS_VARIABLES))) or 'none'})"
            )
        return cls(text, source, frozenset(name for name, _ in names))

    @property
    def needs_vector(self) -> bool:
        return bool(self.variables & VECTOR_VARIABLES)

    def render_text(self, values: Mapping[str, Any]) -> str:
        context = {name: _context_value(value) for name, value in values.items()}
        renderer = pystache.Renderer(escape=_escape, missing_tags="strict")
        try:
            text: str = renderer.render(self.text, context)
        except KeyNotFoundError as exc:
            raise ConfigError(f"{self.source}: unknown template variable: {exc}") from None
        return text

    def render(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The search body for ``values``; a ConfigError when the rendered text is not one JSON object."""
        text = self.render_text(values)
        try:
            body = json.loads(text)
        except ValueError as exc:
            raise ConfigError(
                f"{self.source}: the rendered template is not valid JSON ({exc}); rendered: {_excerpt(text, exc)}"
            ) from None
        if not isinstance(body, dict):
            raise ConfigError(
                f"{self.source}: expected the rendered template to be a JSON object (a search body), "
                f"found {type(body).__name__}"
            )
        return body


def _excerpt(text: str, exc: ValueError) -> str:
    pos = getattr(exc, "pos", 0) or 0
    start = max(0, pos - 60)
    return ("…" if start else "") + text[start : pos + 60].replace("\n", " ")
