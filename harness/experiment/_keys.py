"""Dotted keys: a value as the user gave it (:class:`Given`), where each key was written (:class:`Origins`),
and the one check of a value against the field that declares its key (:func:`coerce`).

A refusal names what the user wrote: ``exp.toml: sweep.params.knn.k: ...`` for a file's key,
``--depth 5: ...`` for a flag, ``--set search.depth=5: ...`` for a ``--set``.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import ConfigError

FILE, FLAG, SET = "file", "flag", "set"
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
        return f"{self.file}: {path}" if self.file else path

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


def field_types(table: type) -> dict[str, Any]:
    """The annotation of each field of a table (its key's type)."""
    return typing.get_type_hints(table)


def _parts(kind: Any) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed)."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        return (args[0] if len(args) == 1 else kind), True
    return kind, False


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def _scalar(kind: Any, given: Given, meta: Mapping[str, Any]) -> Any:
    value = given.value
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, found {_describe(value)}")
        return value
    if kind in (int, float):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (kind is int and isinstance(value, float))
        ):
            raise ValueError(
                f"expected {'an integer' if kind is int else 'a number'}, found {_describe(value)}"
            )
        return kind(value)
    if kind in (str, Path):
        if not isinstance(value, str):
            if given.raw is None:
                raise ValueError(f"expected a string, found {_describe(value)}")
            value = given.raw
        if not value.strip() and not meta.get("empty"):
            raise ValueError("expected a non-empty string, found an empty one")
        return _path(value, given.base) if kind is Path else value
    return value  # a parsed kind (FusionSpec, ParamGrid): the builder reads it


def _path(text: str, base: Path | None) -> Path:
    path = Path(text).expanduser()
    return (base / path).resolve() if base is not None and not path.is_absolute() else path


def _piece(text: str) -> Any:
    """One value of a comma-separated list: a TOML value (``10``, ``true``), else the text."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _items(given: Given, commas: bool) -> list[Any]:
    value = given.value
    if isinstance(value, str):
        return [_piece(v.strip()) for v in value.split(",") if v.strip()] if commas else [value]
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


def coerce(field: dataclasses.Field[Any], kind: Any, given: Given) -> Any:
    """``given`` checked against ``field`` (type ``kind``): the typed value, or a ConfigError naming its origin."""
    meta = field.metadata
    base, _ = _parts(kind)
    try:
        if typing.get_origin(base) is tuple:
            item = typing.get_args(base)[0]
            value: Any = tuple(
                _scalar(
                    item,
                    dataclasses.replace(given, value=v, raw=str(v) if given.raw is not None else None),
                    meta,
                )
                for v in _items(given, meta.get("commas", False))
            )
        else:
            value = _scalar(base, given, meta)
        _check(meta, value)
    except ValueError as exc:
        raise ConfigError(f"{given.origin}: {exc}") from None
    return value


def _check(meta: Mapping[str, Any], value: Any) -> None:
    choices = meta.get("choices")
    if choices is not None:
        names = list(choices())
        for v in value if isinstance(value, tuple) else (value,):
            if v not in names:
                raise ValueError(f"expected one of {', '.join(names)}, found {v!r}")
    check = meta.get("check")
    message = check(value) if check is not None else None
    if message is not None:
        raise ValueError(message)
