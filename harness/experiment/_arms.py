"""An experiment's own arms: ``[[arms]]`` (query templates), ``[[fused]]`` and ``[sweep.params]``, each
checked at its key path.

    [[arms]]                                # the first arm is the baseline the others are tested against
    name = "boosted"
    template_file = "boosted.mustache"      # relative to the file; or template = '''{...}''';
                                            # or template_file = "builtin:lexical" (the package's);
                                            # or stored_template = "id" (on the cluster: lang-mustache)
    index = "products-v2"                   # optional: default the dataset's harness index
    id_field = "sku"                        # optional: default _id
    model = "minilm"                        # for {{query_vector}} (default: embedding.model)
    params = { title_boost = 2.0 }
    connection = { url = "http://127.0.0.1:9201" }   # optional: this arm's own cluster

    [[fused]]
    name = "hybrid"
    inputs = ["boosted", "knn"]
    fusion = "wsum:norm=min-max,weights=0.4/0.6"    # default: the experiment's fusion

    [sweep.params]                          # template parameters of the swept arm's inputs
    boosted.title_boost = [1.0, 2.0, 4.0]   # ARM.PARAM = [values]: a variable of the arm's template
    knn.num_candidates = [100, 400]         # (its params, or k / num_candidates)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from base import ConfigError
from harness.eval import FusionSpec
from harness.keys import Origins
from harness.strategies import ID_FIELD, FusedArm, TemplateArm
from harness.sweep import ParamAxis, ParamGrid
from harness.templates import (
    BUILTIN_PARAMS,
    BUILTIN_PREFIX,
    HARNESS_VARIABLES,
    QueryTemplate,
    builtin_path,
)
from indexer import ConnectionSettings

ARM_KEYS = frozenset(
    {"name", "index", "template", "template_file", "stored_template", "id_field", "model", "query_prompt"}
    | {"params", "connection", "compare_to"}
)
FUSED_KEYS = frozenset({"name", "inputs", "fusion", "compare_to"})
#: the harness's variables that ``[sweep.params]`` may set for an arm whose template uses them
SWEEPABLE = frozenset({"k", "num_candidates"})
ENGINES = ("elasticsearch", "opensearch")


class Table:
    """A TOML table read with its key path, so that every error says where it is."""

    def __init__(self, data: Mapping[str, Any], where: str, origins: Origins) -> None:
        self.data, self.where, self.origins = data, where, origins

    def fail(self, key: str, message: str) -> ConfigError:
        return self.origins.fail(f"{self.where}.{key}" if self.where else key, message)

    def check_keys(self, known: frozenset[str]) -> None:
        unknown = sorted(set(self.data) - known)
        if unknown:
            raise self.fail(unknown[0], f"unknown key: expected some of {', '.join(sorted(known))}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        value = self.data.get(key, default)
        if value is not None and not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.fail(key, f"expected {names}, found {type(value).__name__} {value!r}")
        return value

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.get(key, str, default)
        if value is not None and not value.strip():
            raise self.fail(key, "expected a non-empty string, found an empty one")
        return value

    def names(self, key: str) -> tuple[str, ...]:
        value = self.get(key, list, [])
        if not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(key, f"expected a list of names, found {value!r}")
        return tuple(value)

    def tables(self, key: str) -> list[Table]:
        value = self.get(key, list, [])
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{key}[{i}]", f"expected a table, found {type(item).__name__}")
            out.append(Table(item, f"{key}[{i}]", self.origins))
        return out


@dataclass(frozen=True, slots=True)
class ArmDefaults:
    """What an ``[[arms]]`` table takes from the rest of the experiment when it does not say."""

    base: Path  # its file's folder (template files are relative to it)
    model: str  # embedding.model
    query_prompt: str | None  # embedding.query_prompt


def _template_text(table: Table, base: Path) -> dict[str, tuple[str, str]]:
    """engine ("" = any) -> (text, where it came from), from ``template`` or ``template_file``."""
    inline, file = table.text("template"), table.text("template_file")
    if (inline is None) == (file is None):
        raise table.fail("template", "expected exactly one of template (inline) or template_file")
    if inline is not None:
        return {"": (inline, table.origins.where(f"{table.where}.template"))}
    assert file is not None
    if file.startswith(BUILTIN_PREFIX):
        name = file.removeprefix(BUILTIN_PREFIX)
        try:
            paths = {engine: builtin_path(name, engine) for engine in ENGINES}
        except ConfigError as exc:
            raise table.fail("template_file", str(exc)) from None
        return {e: (p.read_text(encoding="utf-8"), f"{file} ({p.name})") for e, p in paths.items()}
    path = (base / file).resolve()
    if not path.is_file():
        raise table.fail("template_file", f"expected a template file at {path}, found none")
    return {"": (path.read_text(encoding="utf-8"), str(path))}


def connection_of(table: Table, key: str) -> ConnectionSettings | None:
    value = table.get(key, dict)
    if value is None:
        return None
    try:
        return ConnectionSettings.resolve(value, env={})
    except ConfigError as exc:
        raise table.fail(key, str(exc)) from None


def _templates(table: Table, base: Path, params: set[str]) -> dict[str, QueryTemplate]:
    variables = set(HARNESS_VARIABLES) | params
    return {
        engine: QueryTemplate.parse(text, source, variables)
        for engine, (text, source) in _template_text(table, base).items()
    }


def arm(table: Table, defaults: ArmDefaults) -> TemplateArm:
    table.check_keys(ARM_KEYS)
    name = table.text("name")
    if name is None:
        raise table.fail("name", "expected the arm's name, found none")
    params = table.get("params", dict, {})
    clash = sorted(set(params) & set(HARNESS_VARIABLES))
    if clash:
        raise table.fail("params", f"{', '.join(clash)}: the harness fills these variables; use other names")
    model = table.text("model", defaults.model) or defaults.model
    stored = table.text("stored_template")
    if stored is not None and ("template" in table.data or "template_file" in table.data):
        raise table.fail("stored_template", "expected one of template, template_file or stored_template")
    if str(table.data.get("template_file", "")).startswith(BUILTIN_PREFIX):
        params = {**BUILTIN_PARAMS, **params}
    templates = {} if stored is not None else _templates(table, defaults.base, set(params))
    uses_vector = any(t.needs_vector for t in templates.values()) or stored is not None
    return TemplateArm(
        name=name,
        templates=templates,
        params=params,
        index=table.text("index"),
        id_field=table.text("id_field", ID_FIELD) or ID_FIELD,
        model=model if uses_vector else None,
        query_prompt=table.text("query_prompt", defaults.query_prompt),
        connection=connection_of(table, "connection"),
        compare_to=table.names("compare_to"),
        stored_template=stored,
    )


def fused(table: Table, arms: Sequence[str], default: FusionSpec) -> FusedArm:
    table.check_keys(FUSED_KEYS)
    name = table.text("name")
    if name is None:
        raise table.fail("name", "expected the fused arm's name, found none")
    inputs = table.names("inputs")
    if len(inputs) < 2:
        raise table.fail("inputs", f"expected two or more arm names, found {list(inputs)}")
    unknown = [i for i in inputs if i not in arms]
    if unknown:
        raise table.fail("inputs", f"unknown arm {unknown[0]!r}: expected one of {', '.join(arms)}")
    text = table.text("fusion")
    try:
        fusion = FusionSpec.parse(text) if text is not None else default
    except ConfigError as exc:
        raise table.fail("fusion", str(exc)) from None
    if fusion.weights is not None and len(fusion.weights) != len(inputs):
        raise table.fail(
            "fusion", f"expected {len(inputs)} weights (one per input), found {len(fusion.weights)}"
        )
    return FusedArm(name, inputs, table.names("compare_to") or inputs[:1], fusion=fusion)


def _unique(top: Table, kind: str, names: list[str], offset: int = 0) -> None:
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise top.fail(
                f"{kind}[{i - offset}].name", f"the arm name {name!r} is used twice: expected unique names"
            )


def arms_and_fused(
    top: Table, defaults: ArmDefaults, fusion: FusionSpec
) -> tuple[tuple[TemplateArm, ...], tuple[FusedArm, ...]]:
    """``[[arms]]`` (the first the baseline of the others) and ``[[fused]]``, names and references checked."""
    arms = [arm(t, defaults) for t in top.tables("arms")]
    arms = [
        a if a.compare_to or i == 0 else replace(a, compare_to=(arms[0].name,)) for i, a in enumerate(arms)
    ]
    names = [a.name for a in arms]
    _unique(top, "arms", names)
    fused_arms = [fused(t, names, fusion) for t in top.tables("fused")]
    every = names + [f.name for f in fused_arms]
    _unique(top, "fused", every, offset=len(names))
    compared: list[tuple[str, tuple[str, ...]]] = [(f"arms[{i}]", a.compare_to) for i, a in enumerate(arms)]
    compared += [(f"fused[{i}]", f.compare_to) for i, f in enumerate(fused_arms)]
    for where, compare_to in compared:
        unknown = [c for c in compare_to if c not in every]
        if unknown:
            raise top.fail(
                f"{where}.compare_to", f"unknown arm {unknown[0]!r}: expected one of {', '.join(every)}"
            )
    return tuple(arms), tuple(fused_arms)


def _sweepable(arm: TemplateArm) -> set[str]:
    """The params ``[sweep.params]`` may set for ``arm``: its template's variables among its params,
    ``k`` and ``num_candidates`` (a stored template's variables are the engine's: its params)."""
    settable = set(arm.params) | SWEEPABLE
    if arm.stored_template is not None:
        return settable
    return {v for t in arm.templates.values() for v in t.variables} & settable


def param_grid(table: Table, arms: Sequence[TemplateArm], swept: FusedArm, depth: int) -> ParamGrid:
    """``[sweep.params]``: ``ARM.PARAM = [values]`` for inputs of the swept arm, each checked at its key path."""
    if not table.data:
        raise table.fail("", "expected ARM.PARAM = [values, ...] entries, found an empty table")
    by_name = {a.name: a for a in arms}
    axes: list[ParamAxis] = []
    for name, entries in table.data.items():
        if name not in swept.inputs:
            what = "arm" if name in by_name else "unknown arm"
            raise table.fail(
                name,
                f"{what} {name!r}: expected an input of the swept arm {swept.name} ({', '.join(swept.inputs)}), "
                "as ARM.PARAM = [values] with the key unquoted",
            )
        if not isinstance(entries, dict):
            raise table.fail(name, f"expected PARAM = [values] entries for arm {name}, found {entries!r}")
        axes += _axes(Table(entries, f"{table.where}.{name}", table.origins), by_name[name], depth)
    return ParamGrid(tuple(axes))


def _axis(table: Table, arm: TemplateArm, param: str, values: Any, known: set[str]) -> ParamAxis:
    if param not in known:
        raise table.fail(
            param,
            f"unknown param of arm {arm.name}: expected a variable of its template among "
            f"{', '.join(sorted(known)) or 'none'}",
        )
    if not isinstance(values, list) or not values:
        raise table.fail(param, f"expected a non-empty list of values, found {values!r}")
    if len({repr(v) for v in values}) != len(values):
        raise table.fail(param, f"expected distinct values, found a repeated one in {values!r}")
    try:
        json.dumps(values)
    except (TypeError, ValueError):
        raise table.fail(
            param, f"expected JSON values (numbers, strings, lists, tables), found {values!r}"
        ) from None
    if param in SWEEPABLE and not all(type(v) is int and v >= 1 for v in values):
        raise table.fail(param, f"expected positive integers, found {values!r}")
    return ParamAxis(arm.name, param, tuple(values))


def _axes(table: Table, arm: TemplateArm, depth: int) -> list[ParamAxis]:
    known = _sweepable(arm)
    axes = [_axis(table, arm, param, values, known) for param, values in table.data.items()]
    ks = next((a.values for a in axes if a.param == "k"), (depth,))
    for axis in (a for a in axes if a.param == "num_candidates" and "k" in known):
        low = min(axis.values)
        if low < max(ks):
            raise table.fail(
                "num_candidates", f"{low} is below k={max(ks)}: the engines refuse num_candidates < k"
            )
    return axes
