"""Judge prompts: Mustache templates, ours (``builtin:graded``, ``builtin:binary``) or a user's file.

A template file is TOML with a ``user`` template, an optional ``system`` message and its ``scale``
(``graded`` 0-3 or ``binary`` 0/1)::

    scale = "graded"
    system = "You are a search quality rater ..."
    user = '''... {{query}} ... {{document}} ... one of {{labels}}'''

A file with another extension is the user template alone (its scale given apart, ``--scale``).
Variables are checked when the file is read: ``{{query}}`` and ``{{document}}`` must each appear,
``{{labels}}`` may, nothing else may (see :data:`VARIABLES`). The harness fills ``query`` and
``document`` with delimited blocks (:mod:`harness.judgments.judge._text`), so a template cannot forget the
delimiters. Rendering is plain text (no HTML or JSON escaping). A prompt's identity is the sha256 of
its system text, user template and scale: it keys the cache and names the judge.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pystache
from pystache.context import KeyNotFoundError

from base import ConfigError
from harness.judgments.judge._scale import Scale, scale_named
from harness.templates import template_names

BUILTIN_PREFIX = "builtin:"
BUILTIN_PROMPTS = ("graded", "binary")
QUERY, DOCUMENT, LABELS = "query", "document", "labels"
#: the variables a judge template may use, and what the harness fills them with
VARIABLES: dict[str, str] = {
    QUERY: "the query text inside <query id=...> ... </query>",
    DOCUMENT: "the document's context fields inside <document id=...> ... </document>, truncated",
    LABELS: "the scale's labels, e.g. 0, 1, 2, 3",
}
REQUIRED = (QUERY, DOCUMENT)
_KEYS = ("scale", "system", "user")


@dataclass(frozen=True, slots=True)
class JudgePrompt:
    """A system message, a user template and the scale the answer is read on."""

    source: str
    system: str
    user: str
    scale: Scale

    @property
    def sha256(self) -> str:
        canonical = {"system": self.system, "user": self.user, "scale": self.scale.name}
        text = json.dumps(canonical, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def render(self, query: str, document: str) -> list[dict[str, str]]:
        """Chat messages for one pair; ``query`` and ``document`` are the delimited blocks."""
        values = {QUERY: query, DOCUMENT: document, LABELS: self.scale.describe()}
        renderer = pystache.Renderer(escape=lambda text: text, missing_tags="strict")
        try:
            user: str = renderer.render(self.user, values)
        except KeyNotFoundError as exc:  # checked when read; kept for templates built in code
            raise ConfigError(f"{self.source}: unknown template variable: {exc}") from None
        messages = [{"role": "system", "content": self.system}] if self.system.strip() else []
        return [*messages, {"role": "user", "content": user}]


def check_variables(text: str, source: str) -> None:
    """Refuse a user template that lacks {{query}} or {{document}}, or names another variable."""
    names = template_names(text, source)
    unknown = sorted({name for name, depth in names if depth == 0 and name not in VARIABLES})
    if unknown:
        raise ConfigError(
            f"{source}: unknown template variable(s) {', '.join(unknown)}: expected among "
            + ", ".join(f"{{{{{v}}}}} ({why})" for v, why in VARIABLES.items())
        )
    found = {name for name, _ in names}
    missing = [v for v in REQUIRED if v not in found]
    if missing:
        raise ConfigError(
            f"{source}: expected {' and '.join('{{' + m + '}}' for m in missing)} in the user template, "
            "found none"
        )


def _from_table(data: Mapping[str, object], source: str, scale: str | None) -> JudgePrompt:
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{source}: expected the keys {', '.join(_KEYS)}, found also {', '.join(unknown)}")
    user, system, declared = data.get("user"), data.get("system", ""), data.get("scale")
    if not isinstance(user, str) or not user.strip():
        raise ConfigError(f'{source}: expected a non-empty string "user", found {user!r}')
    if not isinstance(system, str):
        raise ConfigError(f'{source}: expected "system" to be a string, found {type(system).__name__}')
    if declared is not None and not isinstance(declared, str):
        raise ConfigError(f'{source}: expected "scale" to be a string, found {declared!r}')
    if declared and scale and declared.strip().lower() != scale.strip().lower():
        raise ConfigError(
            f"{source}: the file's scale is {declared!r}, but {{judgments.scale}} says {scale!r}"
        )
    name = declared or scale
    if not name:
        raise ConfigError(f'{source}: expected a "scale" ({", ".join(BUILTIN_PROMPTS)}), found none')
    check_variables(user, source)
    return JudgePrompt(source, system, user, scale_named(name, f"{source}: scale"))


def builtin_prompt(name: str) -> JudgePrompt:
    """The packaged template ``name`` (``harness/resources/judge/<name>.toml``)."""
    if name not in BUILTIN_PROMPTS:
        raise ConfigError(
            f"expected a built-in judge template among {', '.join(BUILTIN_PROMPTS)}, found {name!r}"
        )
    text = resources.files("harness").joinpath("resources", "judge", f"{name}.toml").read_text("utf-8")
    return _from_table(tomllib.loads(text), f"{BUILTIN_PREFIX}{name}", None)


def load_prompt(ref: str, scale: str | None = None) -> JudgePrompt:
    """``graded`` / ``binary`` (or ``builtin:NAME``), a TOML template file, or a Mustache user template file."""
    name = ref.removeprefix(BUILTIN_PREFIX)
    if name in BUILTIN_PROMPTS and not Path(ref).is_file():
        prompt = builtin_prompt(name)
        if scale and scale_named(scale, "scale").name != prompt.scale.name:
            raise ConfigError(
                f"{ref} rates on the {prompt.scale.name} scale, but {{judgments.scale}} says {scale!r}"
            )
        return prompt
    path = Path(ref).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"expected a judge template ({', '.join(BUILTIN_PROMPTS)} or a file), cannot read {path}: "
            f"{exc.strerror or exc}"
        ) from None
    if path.suffix.lower() != ".toml":
        return _from_table({"user": text}, str(path), scale or None)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: expected TOML (scale, system, user), found: {exc}") from None
    return _from_table(data, str(path), scale)
