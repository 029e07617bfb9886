"""The one builder of an :class:`Experiment`: layers of given values in, one validation, the typed record out.

A layer is what one source gave (:class:`Layer`): the experiment file's keys, the command line's flags,
its ``--set`` entries. The file comes first and every later layer overrides it; the flags and the
``--set`` entries may not both give one key. Each value is checked against the field that declares
its key (:mod:`._tables`), then the keys are checked together (:mod:`._checks`); every refusal names
the key as the user wrote it (:class:`~harness.experiment._keys.Origins`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base import ConfigError
from harness._errors import SettingError
from harness.eval import FusionSpec
from harness.experiment._arms import ArmDefaults, Table, arms_and_fused, param_grid
from harness.experiment._checks import check, tuned_text, user_mapping
from harness.experiment._keys import Given, Origins, coerce, field_types
from harness.experiment._model import Experiment
from harness.experiment._tables import TABLES
from harness.judgments.sources import SOURCES, Setting

ROOT = "root"  # the Experiment's own scalar keys (name, mode, fusion) have no table prefix
PARAMS = "sweep.params"
JUDGMENTS = "judgments"
#: keys that, given by a later source, replace an earlier source's others: your own queries and judgments
#: replace a file's datasets, and datasets replace its queries and judgments
REPLACES: dict[str, tuple[str, ...]] = {
    "data.queries": ("data.datasets",),
    "data.qrels": ("data.datasets",),
    "data.datasets": ("data.queries", "data.qrels"),
}


@dataclass(slots=True)
class Layer:
    """What one source gave: values by dotted key, and (a file's) ``[[arms]]`` and ``[[fused]]`` tables."""

    values: dict[str, Given] = field(default_factory=dict)
    tables: dict[str, Given] = field(default_factory=dict)
    source: Path | None = None
    sha256: str | None = None
    own_connection: bool = False  # the file has its own [connection] table


def _root_fields() -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for f in dataclasses.fields(Experiment) if "doc" in f.metadata}


def _scalar_keys() -> dict[str, tuple[type, dataclasses.Field[Any]]]:
    out: dict[str, tuple[type, dataclasses.Field[Any]]] = {
        name: (Experiment, f) for name, f in _root_fields().items()
    }
    for prefix, table in TABLES.items():
        for f in dataclasses.fields(table):
            if f"{prefix}.{f.name}" != PARAMS and "doc" in f.metadata:
                out[f"{prefix}.{f.name}"] = (table, f)
    return out


#: every dotted key a value can be given for (``sweep.params.ARM.PARAM`` besides), in table order
KEYS: dict[str, tuple[type, dataclasses.Field[Any]]] = _scalar_keys()


def describe_keys() -> list[tuple[str, str, str]]:
    """(key, default, what it is) of every dotted key: the list ``--set`` takes (each judgments source's own
    keys after the tables', said with their source)."""
    tables = [
        (k, repr(f.default) if f.default is not dataclasses.MISSING else "", f.metadata.get("doc", ""))
        for k, (_, f) in KEYS.items()
    ]
    sources = [
        (f"{JUDGMENTS}.{name}", "" if k.default is None else repr(k.default), f"{k.doc} (source {source})")
        for source, kind in SOURCES.items()
        for name, k in kind.keys.items()
    ]
    return tables + sources


def merge(file: Layer | None, given: Sequence[Layer]) -> tuple[dict[str, Given], Layer]:
    """The values of ``file`` overridden by ``given``; a key given by two of ``given`` is refused."""
    values = dict(file.values) if file is not None else {}
    seen: dict[str, Given] = {}
    for layer in given:
        for name in layer.values:
            for replaced in REPLACES.get(name, ()):
                if replaced not in layer.values:
                    values.pop(replaced, None)
        for name, value in layer.values.items():
            if name in seen:
                raise ConfigError(
                    f"{value.origin}: expected one value for {name}, found {seen[name].origin} too"
                )
            seen[name] = values[name] = value
    return values, file or Layer()


def _unknown(name: str, given: Given) -> ConfigError:
    table = name.split(".")[0]
    known = [k for k in KEYS if k.startswith(f"{table}.")] or list(KEYS)
    return ConfigError(f"{given.origin}: unknown key: expected one of {', '.join(known)}")


def _tables(values: Mapping[str, Given], origins: Origins) -> dict[str, Any]:
    """Every table (and root key) built from ``values``, each value checked against its field."""
    kinds: dict[type, dict[str, Any]] = {}
    kwargs: dict[str, dict[str, Any]] = {prefix: {} for prefix in [*TABLES, ROOT]}
    for name, given in values.items():
        if name.startswith(PARAMS + ".") or _source_key(name):
            continue
        if name not in KEYS:
            raise _unknown(name, given)
        table, f = KEYS[name]
        origins.note(name, given)
        kind = kinds.setdefault(table, field_types(table))[f.name]
        kwargs[ROOT if table is Experiment else name.split(".")[0]][f.name] = coerce(f, kind, given)
    built: dict[str, Any] = {prefix: TABLES[prefix](**kwargs[prefix]) for prefix in TABLES}
    return built | kwargs[ROOT]


def _source_key(name: str) -> bool:
    """Whether ``name`` is a key of a judgments source (``judgments.llm``), not of the judgments table."""
    return name.startswith(JUDGMENTS + ".") and name not in KEYS


def _with_source(exp: Experiment, values: Mapping[str, Given], origins: Origins) -> Experiment:
    """The judgments source of ``judgments.source``, built from its own keys; each refusal at its key."""
    kind = SOURCES[exp.judgments.source]
    given = {name.removeprefix(JUDGMENTS + "."): g for name, g in values.items() if _source_key(name)}
    for name, g in given.items():
        origins.note(f"{JUDGMENTS}.{name}", g)
    unknown = sorted(set(given) - set(kind.keys))
    if unknown:
        raise origins.fail(f"{JUDGMENTS}.{unknown[0]}", _unknown_source_key(unknown[0], kind.name))
    try:
        spec = kind.from_settings({name: Setting(g.value, g.base) for name, g in given.items()})
    except SettingError as exc:  # (a key not given, such as the judge's model: the source that needs it)
        path = f"{JUDGMENTS}.{exc.key}" if exc.key in given else f"{JUDGMENTS}.source"
        raise origins.fail(path, exc.message) from None
    return dataclasses.replace(exp, judgments=dataclasses.replace(exp.judgments, spec=spec))


def _unknown_source_key(name: str, source: str) -> str:
    owners = [s for s, kind in SOURCES.items() if name in kind.keys]
    keys = ", ".join(SOURCES[source].keys)
    where = f" (a key of {{{JUDGMENTS}.source}} = {' or '.join(owners)})" if owners else ""
    expected = f"expected some of {keys}" if keys else "it takes no keys of its own"
    return f"unknown key for {{{JUDGMENTS}.source}} = {source}{where}: {expected}"


def _params_table(values: Mapping[str, Given], origins: Origins) -> Table | None:
    """``sweep.params.ARM.PARAM`` values as one nested table (None: none given)."""
    nested: dict[str, dict[str, Any]] = {}
    for name, given in values.items():
        if not name.startswith(PARAMS + "."):
            continue
        parts = name.removeprefix(PARAMS + ".").split(".")
        origins.note(name, given)
        if len(parts) != 2:
            raise ConfigError(f"{given.origin}: expected {PARAMS}.ARM.PARAM = [values]")
        nested.setdefault(parts[0], {})[parts[1]] = given.value
    return Table(nested, PARAMS, origins) if nested else None


def _fusion(parts: dict[str, Any], origins: Origins) -> None:
    """The fusion parsed; tuned, a method with weights starts from equal ones (tuning replaces them)."""
    if "fusion" not in parts:
        return
    text = parts["fusion"]
    if not isinstance(text, str):
        raise origins.fail("fusion", f"expected a fusion such as rrf or wsum:weights=0.3/0.7, found {text!r}")
    try:
        parts["fusion"] = FusionSpec.parse(tuned_text(text, parts["sweep"].tune_on is not None))
    except ConfigError as exc:
        raise origins.fail("fusion", str(exc)) from None


def build(
    file: Layer | None = None, given: Sequence[Layer] = (), *, flags: Mapping[str, str] | None = None
) -> Experiment:
    """The experiment of ``file`` (the experiment file's layer, if any) and ``given`` (flags, ``--set``).

    ``flags``: the command line's flag of each key it has one for, so that a refusal of a flag names
    the other keys as flags too."""
    values, layer = merge(file, given)
    origins = Origins(str(layer.source) if layer.source is not None else None, flags)
    parts = _tables(values, origins)
    _fusion(parts, origins)
    name = parts.pop("name", None) or (layer.source.stem if layer.source is not None else None)
    own: dict[str, Any] = {
        "source": layer.source,
        "sha256": layer.sha256,
        "own_connection": layer.own_connection,
    }
    exp = _with_arms(Experiment(name=name, **own, **parts), layer, origins)
    exp = _with_source(exp, values, origins)
    check(exp, set(values), origins)
    exp = _with_params(exp, values, origins)
    return dataclasses.replace(exp, user_mapping=user_mapping(exp, origins))


def _with_arms(exp: Experiment, layer: Layer, origins: Origins) -> Experiment:
    """The file's ``[[arms]]`` and ``[[fused]]`` (a fused arm without a fusion takes the experiment's)."""
    top = Table({name: g.value for name, g in layer.tables.items()}, "", origins)
    base = layer.source.resolve().parent if layer.source is not None else Path.cwd()
    defaults = ArmDefaults(base, exp.embedding.model, exp.embedding.query_prompt)
    arms, fused = arms_and_fused(top, defaults, exp.fusion)
    return dataclasses.replace(exp, arms=arms, fused=fused)


def _with_params(exp: Experiment, values: Mapping[str, Given], origins: Origins) -> Experiment:
    """``sweep.params`` over the swept arm's inputs."""
    params = _params_table(values, origins)
    if params is None:
        return exp
    arms = exp.arms
    if not arms:
        raise origins.fail(
            PARAMS, "sets template parameters of the file's [[arms]]: expected some, found none"
        )
    swept = exp.swept_arm
    if swept is None:
        raise origins.fail(PARAMS, "is swept held out: expected {sweep.tune_on} and a [[fused]] arm to tune")
    grid = param_grid(params, arms, swept, exp.search.depth)
    return dataclasses.replace(exp, sweep=dataclasses.replace(exp.sweep, params=grid))
