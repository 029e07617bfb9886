"""The JSON Schema of ``results.json``, derived from the typed model it describes.

``results_schema()`` walks :class:`RunResults` field by field with the same rules as the
codec (:mod:`._codec`), so the schema cannot drift from what the code writes. The package
ships the generated file (``resources/schema/results-v<N>.schema.json``) for users who
validate in CI; a test checks that the shipped file equals this function's output.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from harness.eval import FusionSpec
from harness.results._codec import json_key

DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: schemas of the types the codec stores in a form of their own
CUSTOM_SCHEMAS: dict[type, dict[str, Any]] = {
    FusionSpec: {
        "type": "object",
        "required": ["method", "norm", "spec"],
        "properties": {
            "method": {"type": "string"},
            "norm": {"type": "string"},
            "k": {"type": "integer"},
            "weights": {"type": "array", "items": {"type": "number"}},
            "spec": {"type": "string", "description": "round-trips through --fusion"},
        },
        "additionalProperties": False,
    }
}
_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
}


def _ref(kind: type, defs: dict[str, Any]) -> dict[str, Any]:
    name = kind.__name__
    if name not in defs:
        defs[name] = {}  # placeholder against recursion
        defs[name] = _object(kind, defs)
    return {"$ref": f"#/$defs/{name}"}


def _object(kind: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(kind)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(kind):
        key = json_key(f)
        props[key] = _schema(hints[f.name], defs)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(key)
    out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if kind.__doc__:
        out["description"] = " ".join(kind.__doc__.split())
    return out


def _schema(kind: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if kind in CUSTOM_SCHEMAS:
        return CUSTOM_SCHEMAS[kind]
    if kind in _SCALARS:
        return _SCALARS[kind]
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _ref(kind, defs)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema(a, defs) for a in args]}
    if origin in (dict, typing.Mapping):
        return {"type": "object", "additionalProperties": _schema(args[1], defs)}
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        items = [_schema(a, defs) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": len(args), "maxItems": len(args)}
    if origin in (tuple, list):
        return {"type": "array", "items": _schema(args[0], defs)}
    raise TypeError(f"no JSON Schema for {kind!r}")


def results_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``results.json``."""
    from harness.results._model import SCHEMA_VERSION, RunResults

    defs: dict[str, Any] = {}
    top = _object(RunResults, defs)
    top["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    top["required"] = ["schema_version", *[k for k in top["required"] if k != "schema_version"]]
    return {
        "$schema": DRAFT,
        "$id": f"https://github.com/r2med-harness/schemas/results-v{SCHEMA_VERSION}.schema.json",
        "title": f"r2med-harness results.json, schema version {SCHEMA_VERSION}",
        **top,
        "$defs": dict(sorted(defs.items())),
    }


def write_shipped_schema() -> str:
    """Regenerate the shipped schema file (``python -m harness.results._schema``); returns its path."""
    import json
    from importlib import resources

    from base import write_text_atomic
    from harness.results import SCHEMA_RESOURCE

    path = str(resources.files("harness").joinpath(SCHEMA_RESOURCE))
    write_text_atomic(path, json.dumps(results_schema(), indent=1) + "\n")
    return path


if __name__ == "__main__":  # pragma: no cover
    print(write_shipped_schema())
