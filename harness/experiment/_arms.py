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
    search_pipeline = "my-pipeline"         # optional: an OpenSearch search pipeline its searches run through

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
from harness._errors import SettingError
from harness.eval import FusionSpec
from harness.experiment._tables import ConnectionTable
from harness.keys import FILE, PERFORMANCE, RESULTS, Given, Origins, build_table, declared, key
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

#: the harness's variables that ``[sweep.params]`` may set for an arm whose template uses them
SWEEPABLE = frozenset({"k", "num_candidates"})
ENGINES = ("elasticsearch", "opensearch")


def _template_path(value: str) -> bool:
    """Whether a template_file is a file (resolved from the experiment file's folder), not builtin:NAME."""
    return not value.startswith(BUILTIN_PREFIX)


@dataclass(frozen=True, slots=True)
class ArmKeys:
    """One ``[[arms]]`` table: a query template, where it searches and with which model."""

    name: str | None = key(affects=RESULTS, doc="the arm's name (the first arm is the others' baseline)")
    template: str | None = key(
        affects=RESULTS, doc="the query template, inline (Mustache over a search body)"
    )
    template_file: str | None = key(
        affects=RESULTS,
        paths=_template_path,
        doc="a template file (from the experiment's folder), or builtin:NAME",
    )
    stored_template: str | None = key(
        affects=RESULTS, doc="the id of a search template stored on the cluster"
    )
    index: str | None = key(
        affects=RESULTS, doc="the index or alias searched (default: the dataset's harness index)"
    )
    id_field: str = key(ID_FIELD, affects=RESULTS, doc="the field that holds a document's id")
    model: str | None = key(
        affects=RESULTS, doc="the embedding model of {{query_vector}} (default: embedding.model)"
    )
    query_prompt: str | None = key(
        affects=RESULTS, empty=True, doc="put before every query it embeds (default: embedding.query_prompt)"
    )
    params: Mapping[str, Any] | None = key(affects=RESULTS, doc="the template's own variables: NAME = value")
    connection: Mapping[str, Any] | None = key(
        affects=PERFORMANCE, doc="this arm's own cluster: connection keys (url, username, ...)"
    )
    compare_to: tuple[str, ...] = key(
        (), affects=RESULTS, commas=True, doc="the arms it is tested against (default: the first arm)"
    )
    search_pipeline: str | None = key(
        affects=RESULTS,
        doc="an OpenSearch search pipeline its searches run through (a [search.pipelines] name, or the cluster's)",
    )

    def check(self) -> None:
        if self.name is None:
            raise SettingError("name", "expected the arm's name, found none")
        clash = sorted(set(self.params or {}) & set(HARNESS_VARIABLES))
        if clash:
            raise SettingError(
                "params", f"{', '.join(clash)}: the harness fills these variables; use other names"
            )
        if self.stored_template is not None and (self.template is not None or self.template_file is not None):
            raise SettingError(
                "stored_template", "expected one of template, template_file or stored_template"
            )
        if self.stored_template is None and (self.template is None) == (self.template_file is None):
            raise SettingError("template", "expected exactly one of template (inline) or template_file")


@dataclass(frozen=True, slots=True)
class FusedKeys:
    """One ``[[fused]]`` table: arms fused into one ranking."""

    name: str | None = key(affects=RESULTS, doc="the fused arm's name")
    inputs: tuple[str, ...] = key((), affects=RESULTS, commas=True, doc="the arms it fuses (two or more)")
    fusion: str | None = key(
        affects=RESULTS, doc="rrf[:k=60] | wsum[:weights=a/b] | ... (default: the experiment's)"
    )
    compare_to: tuple[str, ...] = key(
        (), affects=RESULTS, commas=True, doc="the arms it is tested against (default: its first input)"
    )

    def check(self) -> None:
        if self.name is None:
            raise SettingError("name", "expected the fused arm's name, found none")
        if len(self.inputs) < 2:
            raise SettingError("inputs", f"expected two or more arm names, found {list(self.inputs)}")


class Table:
    """``[sweep.params]`` read with its key path, so that every error says where it is."""

    def __init__(self, data: Mapping[str, Any], where: str, origins: Origins) -> None:
        self.data, self.where, self.origins = data, where, origins

    def fail(self, key: str, message: str) -> ConfigError:
        return self.origins.fail(f"{self.where}.{key}" if self.where else key, message)


@dataclass(frozen=True, slots=True)
class ArmDefaults:
    """What an ``[[arms]]`` table takes from the rest of the experiment when it does not say."""

    base: Path  # its file's folder (template files are relative to it)
    model: str  # embedding.model
    query_prompt: str | None  # embedding.query_prompt
    origins: Origins


def read_tables(kind: type, where: str, value: Any, defaults: ArmDefaults) -> list[Any]:
    """The tables of an array of tables (``[[arms]]``), each built from its keys at ``where[i].key``."""
    origins, file = defaults.origins, defaults.origins.file
    if value is None:
        return []
    if not isinstance(value, list):
        raise origins.fail(where, f"expected an array of tables ([[{where}]]), found {type(value).__name__}")
    keys, out = declared(kind), []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise origins.fail(f"{where}[{i}]", f"expected a table, found {type(item).__name__}")
        given = {}
        for name, v in item.items():
            path = f"{where}[{i}].{name}"
            if name not in keys:
                raise origins.fail(path, f"unknown key: expected some of {', '.join(sorted(keys))}")
            given[name] = Given(v, f"{file}: {path}" if file else path, FILE, defaults.base)
        out.append(build_table(kind, f"{where}[{i}]", given, origins))
    return out


def _template_text(keys: ArmKeys, where: str, origins: Origins) -> dict[str, tuple[str, str]]:
    """engine ("" = any) -> (text, where it came from), from ``template`` or ``template_file``."""
    if keys.template is not None:
        return {"": (keys.template, origins.where(f"{where}.template"))}
    file = keys.template_file
    assert file is not None
    if file.startswith(BUILTIN_PREFIX):
        name = file.removeprefix(BUILTIN_PREFIX)
        try:
            paths = {engine: builtin_path(name, engine) for engine in ENGINES}
        except ConfigError as exc:
            raise origins.fail(f"{where}.template_file", str(exc)) from None
        return {e: (p.read_text(encoding="utf-8"), f"{file} ({p.name})") for e, p in paths.items()}
    path = Path(file)
    if not path.is_file():
        raise origins.fail(f"{where}.template_file", f"expected a template file at {path}, found none")
    return {"": (path.read_text(encoding="utf-8"), str(path))}


def _connection(keys: ArmKeys, where: str, origins: Origins) -> ConnectionSettings | None:
    """The arm's own cluster: its connection table, every key checked as the experiment's (no environment)."""
    if keys.connection is None:
        return None
    path, file = f"{where}.connection", origins.file
    given = {}
    for name, value in keys.connection.items():
        if name not in declared(ConnectionTable):
            known = ", ".join(declared(ConnectionTable))
            raise origins.fail(f"{path}.{name}", f"unknown key: expected some of {known}")
        given[name] = Given(value, f"{file}: {path}.{name}" if file else f"{path}.{name}", FILE)
    table = build_table(ConnectionTable, path, given, origins)
    try:
        return table.settings(own=True)
    except ConfigError as exc:
        raise origins.fail(path, str(exc)) from None


def arm(keys: ArmKeys, where: str, defaults: ArmDefaults) -> TemplateArm:
    """The template arm of one ``[[arms]]`` table."""
    origins = defaults.origins
    params = dict(keys.params or {})
    if keys.template_file is not None and keys.template_file.startswith(BUILTIN_PREFIX):
        params = {**BUILTIN_PARAMS, **params}
    templates: dict[str, QueryTemplate] = {}
    if keys.stored_template is None:
        variables = set(HARNESS_VARIABLES) | set(params)
        templates = {
            engine: QueryTemplate.parse(text, source, variables)
            for engine, (text, source) in _template_text(keys, where, origins).items()
        }
    uses_vector = any(t.needs_vector for t in templates.values()) or keys.stored_template is not None
    assert keys.name is not None
    return TemplateArm(
        name=keys.name,
        templates=templates,
        params=params,
        index=keys.index,
        id_field=keys.id_field,
        model=(keys.model or defaults.model) if uses_vector else None,
        query_prompt=keys.query_prompt if keys.query_prompt is not None else defaults.query_prompt,
        connection=_connection(keys, where, origins),
        compare_to=keys.compare_to,
        stored_template=keys.stored_template,
        search_pipeline=keys.search_pipeline,
    )


def fused(
    keys: FusedKeys, where: str, arms: Sequence[str], default: FusionSpec, origins: Origins
) -> FusedArm:
    """The fused arm of one ``[[fused]]`` table."""
    unknown = [i for i in keys.inputs if i not in arms]
    if unknown:
        raise origins.fail(
            f"{where}.inputs", f"unknown arm {unknown[0]!r}: expected one of {', '.join(arms)}"
        )
    try:
        fusion = FusionSpec.parse(keys.fusion) if keys.fusion is not None else default
    except ConfigError as exc:
        raise origins.fail(f"{where}.fusion", str(exc)) from None
    if fusion.weights is not None and len(fusion.weights) != len(keys.inputs):
        raise origins.fail(
            f"{where}.fusion",
            f"expected {len(keys.inputs)} weights (one per input), found {len(fusion.weights)}",
        )
    assert keys.name is not None
    return FusedArm(keys.name, keys.inputs, keys.compare_to or keys.inputs[:1], fusion=fusion)


def _unique(origins: Origins, kind: str, names: list[str], offset: int = 0) -> None:
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise origins.fail(
                f"{kind}[{i - offset}].name", f"the arm name {name!r} is used twice: expected unique names"
            )


def arms_and_fused(
    arm_keys: Sequence[ArmKeys], fused_keys: Sequence[FusedKeys], defaults: ArmDefaults, fusion: FusionSpec
) -> tuple[tuple[TemplateArm, ...], tuple[FusedArm, ...]]:
    """``[[arms]]`` (the first the baseline of the others) and ``[[fused]]``, names and references checked."""
    origins = defaults.origins
    arms = [arm(k, f"arms[{i}]", defaults) for i, k in enumerate(arm_keys)]
    arms = [
        a if a.compare_to or i == 0 else replace(a, compare_to=(arms[0].name,)) for i, a in enumerate(arms)
    ]
    names = [a.name for a in arms]
    _unique(origins, "arms", names)
    fused_arms = [fused(k, f"fused[{i}]", names, fusion, origins) for i, k in enumerate(fused_keys)]
    every = names + [f.name for f in fused_arms]
    _unique(origins, "fused", every, offset=len(names))
    compared: list[tuple[str, tuple[str, ...]]] = [(f"arms[{i}]", a.compare_to) for i, a in enumerate(arms)]
    compared += [(f"fused[{i}]", f.compare_to) for i, f in enumerate(fused_arms)]
    for where, compare_to in compared:
        unknown = [c for c in compare_to if c not in every]
        if unknown:
            raise origins.fail(
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
