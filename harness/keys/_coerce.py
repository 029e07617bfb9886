"""The one check of a value against the key that declares it (:func:`coerce`) and of a table's keys
together (:func:`build_table`): what every command, file and ``--set`` goes through."""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections import abc
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from base import ConfigError
from harness._errors import SettingError
from harness.keys._declare import declared
from harness.keys._given import Given, Origins


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


def _number(kind: Any, value: Any) -> Any:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (kind is int and isinstance(value, float))
    ):
        raise ValueError(f"expected {'an integer' if kind is int else 'a number'}, found {_describe(value)}")
    return kind(value)


def _date(value: Any) -> date:
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError(f"expected a date YYYY-MM-DD, found {_describe(value)}")


def _scalar(kind: Any, given: Given, meta: Mapping[str, Any]) -> Any:
    value = given.value
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"expected true or false, found {_describe(value)}")
        return value
    if kind in (int, float):
        return _number(kind, value)
    if kind is date:
        return _date(value)
    if typing.get_origin(kind) in (dict, Mapping, abc.Mapping):
        if not isinstance(value, dict):
            raise ValueError(f"expected a table, found {_describe(value)}")
        return value
    if kind in (str, Path):
        if not isinstance(value, str):
            if given.raw is None:
                raise ValueError(f"expected a string, found {_describe(value)}")
            value = given.raw
        if not value.strip() and not meta.get("empty"):
            raise ValueError("expected a non-empty string, found an empty one")
        if kind is Path:
            return _path(value, given.base)
        paths = meta.get("paths")
        return str(_path(value, given.base)) if paths is not None and paths(value) and given.base else value
    return value  # a parsed kind (FusionSpec, ParamGrid): its reader parses it


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


def build_table(table: type, prefix: str, values: Mapping[str, Given], origins: Origins) -> Any:
    """``table`` built from ``values`` (by key name within it, each checked against its declaration, the others
    left at their defaults), then its keys checked together (the table's own ``check()``, whose
    :class:`~harness._errors.SettingError` names the key it refuses); every refusal named as the user wrote it."""
    keys, kinds = declared(table), field_types(table)
    kwargs: dict[str, Any] = {}
    for name, given in values.items():
        path = f"{prefix}.{name}" if prefix else name
        origins.note(path, given)
        kwargs[name] = coerce(keys[name], kinds[name], given)
    built = table(**kwargs)
    check = getattr(built, "check", None)
    if check is not None:
        try:
            check()
        except SettingError as exc:
            raise origins.fail(f"{prefix}.{exc.key}" if prefix else exc.key, exc.message) from None
    return built


def table_of(table: type, values: Mapping[str, Any], prefix: str = "", base: Path | None = None) -> Any:
    """``table`` built from plain values (``{"max_rank": 10}``), as a file's table gives them (``base``: where its
    relative paths start); a refusal names ``prefix.key``."""
    keys = declared(table)
    origins = Origins()
    given: dict[str, Given] = {}
    for name, value in values.items():
        path = f"{prefix}.{name}" if prefix else name
        if name not in keys:
            raise ConfigError(f"{path}: unknown key: expected one of {', '.join(keys)}")
        given[name] = Given(value, path, "file", base)
    return build_table(table, prefix, given, origins)
