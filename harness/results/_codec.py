"""Typed records to JSON and back, driven by the dataclasses' own type hints.

Supported field types: ``str``, ``int``, ``float``, ``bool``, ``None`` unions, ``tuple[X, ...]``,
fixed tuples, ``list[X]``, ``dict[str, X]``, ``Any`` (kept as it is), nested dataclasses, and
the types given a pair of functions in :data:`CUSTOM`. A field's JSON key is its name unless
its metadata says ``{"json": "other"}``; ``{"legacy": ("old",)}`` names keys an older layout used,
read when the current key is absent. Decoding errors name the path inside the file, e.g.
``results.json: datasets.sample.arms.hybrid.qps: expected a number, found 'fast'``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

from harness._errors import RunError
from harness.eval import FusionSpec

T = TypeVar("T")

#: types stored in a form of their own: type -> (encode, decode)
CUSTOM: dict[type, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    FusionSpec: (lambda spec: spec.to_dict(), lambda data: FusionSpec.parse(str(data["spec"]))),
}


def json_key(field: dataclasses.Field[Any]) -> str:
    return str(field.metadata.get("json", field.name))


def encode(value: Any) -> Any:
    """A JSON-ready copy of ``value`` (dataclasses become objects, tuples become lists)."""
    for kind, (enc, _) in CUSTOM.items():
        if isinstance(value, kind):
            return enc(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {json_key(f): encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def decode(kind: Any, data: Any, where: str = "") -> Any:
    """``data`` (parsed JSON) as an instance of ``kind``; :class:`RunError` naming ``where`` if it is not."""
    if kind is Any:
        return data
    if kind in CUSTOM:
        try:
            return CUSTOM[kind][1](data)
        except Exception as exc:
            raise RunError(f"{where}: expected a {kind.__name__} record, found {_show(data)}") from exc
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _decode_dataclass(kind, data, where)
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(args, data, where)
    if origin in (dict, Mapping, typing.Mapping):
        _expect(isinstance(data, dict), "an object", data, where)
        return {str(k): decode(args[1], v, f"{where}.{k}") for k, v in data.items()}
    if origin in (tuple, list):
        return _decode_sequence(origin, args, data, where)
    return _decode_scalar(kind, data, where)


def _decode_dataclass(kind: type[T], data: Any, where: str) -> T:
    _expect(isinstance(data, dict), "an object", data, where)
    hints = _hints(kind)  # type: ignore[arg-type]  # classes are hashable
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(kind):  # type: ignore[arg-type]
        key = json_key(f)
        if key not in data:
            key = next((old for old in f.metadata.get("legacy", ()) if old in data), key)
        if key not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise RunError(f"{where}: expected a key {key!r}, found keys {sorted(data)}")
            continue
        kwargs[f.name] = decode(hints[f.name], data[key], f"{where}.{key}".lstrip("."))
    return kind(**kwargs)


def _decode_union(args: tuple[Any, ...], data: Any, where: str) -> Any:
    if data is None and type(None) in args:
        return None
    options = [a for a in args if a is not type(None)]
    last: RunError | None = None
    for option in options:
        try:
            return decode(option, data, where)
        except RunError as exc:
            last = exc
    assert last is not None
    raise last


def _decode_sequence(origin: Any, args: tuple[Any, ...], data: Any, where: str) -> Any:
    _expect(isinstance(data, list), "a list", data, where)
    fixed = origin is tuple and not (len(args) == 2 and args[1] is Ellipsis)
    if fixed:
        _expect(len(data) == len(args), f"a list of {len(args)}", data, where)
        return tuple(decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True)))
    items = [decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(data)]
    return tuple(items) if origin is tuple else items


def _decode_scalar(kind: Any, data: Any, where: str) -> Any:
    if kind is float:
        ok = isinstance(data, int | float) and not isinstance(data, bool)
        _expect(ok, "a number", data, where)
        return float(data)
    if kind is int:
        _expect(isinstance(data, int) and not isinstance(data, bool), "an integer", data, where)
        return data
    if kind is bool:
        _expect(isinstance(data, bool), "true or false", data, where)
        return data
    if kind is str:
        _expect(isinstance(data, str), "a string", data, where)
        return data
    if kind is type(None):
        _expect(data is None, "null", data, where)
        return None
    raise TypeError(f"no JSON decoding for {kind!r}")  # a programming error, not a user's


def _expect(ok: bool, what: str, data: Any, where: str) -> None:
    if not ok:
        raise RunError(f"{where or 'top level'}: expected {what}, found {_show(data)}")


def _show(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:60] + "…"
