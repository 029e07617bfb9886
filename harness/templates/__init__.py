"""Query templates (mustache, rendered on the client) and the templates that ship in the package.

    template = QueryTemplate.parse(text, "exp.toml: arms[0].template", known={"query", "size", "boost"})
    body = template.render({"query": "fever", "size": 10, "boost": 2})

``builtin_template("lexical", product)`` reads ``harness/resources/templates/arms/``: the
built-in arms' bodies as templates (``vector`` has one per engine's kNN dialect), which an
experiment names as ``template_file = "builtin:lexical"``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from base import ConfigError
from harness.templates._mustache import HARNESS_VARIABLES, VECTOR_VARIABLES, QueryTemplate, template_names

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "resources" / "templates" / "arms"
BUILTIN_PREFIX = "builtin:"
#: the built-in templates' own params, and their defaults (an arm's params override them)
BUILTIN_PARAMS: dict[str, object] = {
    "combined_field": "title_text",  # lexical: our copy_to field of title and text (.r2med: R2MED's BM25)
    "fields": ["title", "text"],  # lexical_multi_match, lexical_beir: the fields searched side by side
}


def builtin_names() -> list[str]:
    names = {p.stem.split("-")[0] for p in BUILTIN_DIR.glob("*.mustache")}
    return sorted(names)


def builtin_path(name: str, product: str) -> Path:
    """The packaged template ``name`` for ``product``: ``<name>-<product>.mustache``, else ``<name>.mustache``."""
    for candidate in (BUILTIN_DIR / f"{name}-{product}.mustache", BUILTIN_DIR / f"{name}.mustache"):
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"expected a built-in template among {', '.join(BUILTIN_PREFIX + n for n in builtin_names())}, "
        f"found {BUILTIN_PREFIX}{name}"
    )


@lru_cache(maxsize=32)
def builtin_template(name: str, product: str) -> QueryTemplate:
    """The packaged template ``name`` for ``product``, parsed once."""
    path = builtin_path(name, product)
    known = set(HARNESS_VARIABLES) | set(BUILTIN_PARAMS)
    return QueryTemplate.parse(
        path.read_text(encoding="utf-8"), f"{BUILTIN_PREFIX}{name} ({path.name})", known
    )


__all__ = [
    "BUILTIN_DIR",
    "BUILTIN_PARAMS",
    "BUILTIN_PREFIX",
    "HARNESS_VARIABLES",
    "VECTOR_VARIABLES",
    "QueryTemplate",
    "builtin_names",
    "builtin_path",
    "builtin_template",
    "template_names",
]
