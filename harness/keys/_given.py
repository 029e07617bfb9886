"""A value as the user gave it (:class:`Given`), where each key was written (:class:`Origins`), and how a
refusal names it: ``exp.toml: sweep.params.knn.k: ...`` for a file's key, ``--depth 5: ...`` for a flag,
``--set search.depth=5: ...`` for a ``--set``. A secret's value is never part of how it was written.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import ConfigError

FILE, FLAG, SET = "file", "flag", "set"
#: how a secret's value reads wherever a value would be shown
HIDDEN = "<secret>"
#: credentials inside a URL (``http://user:password@host``): never part of how a value was written
_USERINFO = re.compile(r"(\w+://)[^/@\s]+@")
#: ``{search.depth}`` in a refusal's text: another key, spelled as the refused key's source spells keys
_KEY_REF = re.compile(r"\{([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+)\}")


@dataclass(frozen=True, slots=True)
class Given:
    """A value for a dotted key and how the user wrote it."""

    value: Any
    origin: str  # "exp.toml: search.depth" | "--depth 5" | "--set search.depth=5"
    kind: str = FLAG  # FILE, FLAG or SET: how other keys are spelled in a refusal of this one
    base: Path | None = None  # relative paths start here (a file's folder; None: the working directory)
    raw: str | None = None  # the text as written (--set), for keys whose value is text


class Origins:
    """Where each dotted key was written; the keys of a file not listed here are ``FILE: key.path``.

    ``flags``: the command-line flag of a key (``search.depth`` -> ``--depth``), to spell other keys in the
    refusal of a flag as flags."""

    def __init__(self, file: str | None = None, flags: Mapping[str, str] | None = None) -> None:
        self.file, self.flags = file, dict(flags or {})
        self.written: dict[str, Given] = {}

    def note(self, path: str, given: Given) -> None:
        self.written[path] = given

    def _given(self, path: str) -> Given | None:
        return next((self.written[p] for p in _prefixes(path) if p in self.written), None)

    def where(self, path: str) -> str:
        given = self._given(path)
        if given is not None:
            return given.origin
        return f"{self.file}: {path}" if self.file else self.flags.get(path, path)

    def spell(self, key: str, kind: str) -> str:
        """``key`` as a user of ``kind`` (a file, flags, --set) writes it."""
        if kind == FLAG:
            return self.flags.get(key, f"--set {key}=VALUE")
        return key

    def fail(self, path: str, message: str) -> ConfigError:
        """A refusal of ``path``; ``{other.key}`` in ``message`` is spelled as ``path``'s source spells keys."""
        given = self._given(path)
        kind = given.kind if given is not None else (FILE if self.file else SET)
        text = _KEY_REF.sub(lambda m: self.spell(m.group(1), kind), message)
        return ConfigError(f"{self.where(path)}: {text}")


def _prefixes(path: str) -> Iterator[str]:
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        yield ".".join(parts[:end])


def set_value(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``--set``: the value read as a TOML value, else as the text itself."""
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise ConfigError(f"--set {text}: expected KEY=VALUE with a dotted key, e.g. search.batch_size=64")
    try:
        return name.strip(), tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return name.strip(), value


def shown(text: str) -> str:
    """``text`` as a refusal may show it: a URL's credentials left out."""
    return _USERINFO.sub(lambda m: f"{m.group(1)}{HIDDEN}@", text)


def set_given(entry: str, secret: bool = False, written: str | None = None) -> tuple[str, Given]:
    """One ``--set KEY=VALUE`` entry as a :class:`Given` (``written``: how an old flag that handed it on was
    written); a secret's value is left out of how it was written."""
    name, value = set_value(entry)
    raw = entry.partition("=")[2]
    if written:
        return name, Given(value, written, FLAG, raw=raw)
    origin = f"--set {name}={HIDDEN}" if secret else shown(f"--set {entry}")
    return name, Given(value, origin, SET, raw=raw)
