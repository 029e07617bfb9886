"""Prompts for generation: our own, one TOML resource per method, or a user's file in the same form.

A prompt file is TOML with a ``user`` template and an optional ``system`` message::

    system = "You are a physician ..."
    user = '''... {query} ...'''          # LameR also takes {passages}

Placeholders are ``{query}`` and, for methods that see first-stage passages, ``{passages}``;
literal braces are written ``{{`` and ``}}``. The prompt's identity is the sha256 of its system
and user texts, which keys the generation cache and goes into the expansion file and its manifest.
"""

from __future__ import annotations

import hashlib
import json
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from base import ConfigError

QUERY, PASSAGES = "query", "passages"


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A system message and a user template, from a named source (``builtin:hyde`` or a file path)."""

    source: str
    system: str
    user: str

    @property
    def sha256(self) -> str:
        canonical = json.dumps({"system": self.system, "user": self.user}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def placeholders(self) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(self.user) if name is not None}

    def check(self, method: str, *, needs_passages: bool) -> PromptTemplate:
        """Refuse a template that lacks ``{query}``, names unknown fields, or misuses ``{passages}``."""
        found = self.placeholders
        allowed = {QUERY, PASSAGES} if needs_passages else {QUERY}
        unknown = sorted(found - allowed)
        if unknown:
            raise ConfigError(
                f"prompt {self.source}: expected placeholders among {{{'}, {'.join(sorted(allowed))}}} for "
                f"{method}, found {', '.join('{' + u + '}' for u in unknown)} (write literal braces as {{{{ }}}})"
            )
        missing = sorted(allowed - found)
        if missing:
            raise ConfigError(
                f"prompt {self.source}: expected {', '.join('{' + m + '}' for m in missing)} in the user "
                f"template for {method}, found none"
            )
        return self

    def render(self, query: str, passages: str | None = None) -> list[dict[str, str]]:
        """Chat messages for one query: the system message (when there is one), then the user's."""
        values = {QUERY: query, PASSAGES: passages or ""}
        messages = [{"role": "system", "content": self.system}] if self.system.strip() else []
        messages.append({"role": "user", "content": self.user.format_map(values)})
        return messages

    def describe(self) -> dict[str, str]:
        return {"source": self.source, "sha256": self.sha256, "system": self.system, "user": self.user}


def _parse(data: Mapping[str, object], source: str) -> PromptTemplate:
    unknown = sorted(set(data) - {"system", "user"})
    if unknown:
        raise ConfigError(
            f"prompt {source}: expected the keys system and user, found also {', '.join(unknown)}"
        )
    user, system = data.get("user"), data.get("system", "")
    if not isinstance(user, str) or not user.strip():
        raise ConfigError(f'prompt {source}: expected a non-empty string "user", found {user!r}')
    if not isinstance(system, str):
        raise ConfigError(f'prompt {source}: expected "system" to be a string, found {type(system).__name__}')
    try:
        list(string.Formatter().parse(user))
    except ValueError as exc:
        raise ConfigError(f"prompt {source}: the user template is not a valid format string: {exc}") from None
    return PromptTemplate(source=source, system=system, user=user)


def builtin_prompt(method: str) -> PromptTemplate:
    """The packaged prompt for ``method`` (``harness/resources/prompts/<method>.toml``)."""
    ref = resources.files("harness").joinpath("resources", "prompts", f"{method}.toml")
    try:
        text = ref.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no built-in prompt for method {method!r}; give one with --prompt FILE") from None
    return _parse(tomllib.loads(text), f"builtin:{method}")


def load_prompt(path: Path) -> PromptTemplate:
    """A user's prompt file (TOML with ``user`` and optional ``system``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the prompt file {path}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"prompt {path}: expected TOML (system = ..., user = ...), found: {exc}") from None
    return _parse(data, str(path))
