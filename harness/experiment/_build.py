"""The one builder of keys: layers of given values in, one validation, typed tables out; for the experiment
(:func:`build`) and for every other command (:func:`settings`, through the command's :class:`View`).

A layer is what one source gave (:class:`Layer`): a file's keys, the command line's flags, its ``--set``
entries. The file comes first and every later layer overrides it; the flags and the ``--set`` entries may not
both give one key. Each value is checked against the key that declares it, each table's keys together by the
table (:func:`harness.keys.build_table`), then the experiment's keys across tables (:mod:`._checks`); every
refusal names the key as the user wrote it (:class:`~harness.keys.Origins`). A command reads the keys of its
view: a flag or ``--set`` of another key is refused, a file's other keys are checked and left for the commands
that read them (one file serves ``harness index``, ``harness run`` and ``harness judge``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from base import ConfigError
from harness._errors import SettingError
from harness.eval import FusionSpec
from harness.experiment._arms import (
    ArmDefaults,
    ArmKeys,
    FusedKeys,
    Table,
    arms_and_fused,
    param_grid,
    read_tables,
)
from harness.experiment._checks import check, read_mapping, tuned_text
from harness.experiment._model import Experiment
from harness.experiment._registry import (
    ALL_TABLES,
    JUDGMENTS,
    KEYS,
    PARAMS,
    ROOT,
    is_source_key,
    source_keys,
)
from harness.experiment._tables import TABLES, ConnectionTable
from harness.judgments.sources import SOURCES, Source
from harness.keys import FILE, Given, Origins, build_table, coerce, field_types
from indexer import ConnectionSettings

T = TypeVar("T")
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


@dataclass(frozen=True, slots=True)
class View:
    """The keys one command reads: whole tables by prefix (``tables``), single keys (``keys``), and the
    judgments source it is (``source``: its keys, ``judgments.KEY``; ``source_keys``: only those)."""

    command: str
    tables: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    source: str | None = None
    source_keys: tuple[str, ...] | None = None

    def reads(self, name: str) -> bool:
        prefix = name.split(".")[0] if "." in name else ROOT
        if name in self.keys or prefix in self.tables:
            return True
        if self.source is None or not is_source_key(name):
            return False
        return self.source_keys is None or name.removeprefix(JUDGMENTS + ".") in self.source_keys

    def reads_table(self, prefix: str, table: type) -> bool:
        return prefix in self.tables or any(
            self.reads(f"{prefix}.{f.name}") for f in dataclasses.fields(table)
        )

    def names(self) -> list[str]:
        """The keys it reads, as a refusal lists them."""
        found = [k for k in KEYS if self.reads(k)]
        if self.source is not None:
            found += [
                f"{JUDGMENTS}.{k}"
                for k in source_keys(SOURCES[self.source])
                if self.reads(f"{JUDGMENTS}.{k}")
            ]
        return found


#: ``harness run``: every key of the experiment
RUN = View("harness run", (ROOT, *TABLES))


@dataclass(frozen=True, slots=True)
class Settings:
    """The keys a command was given, built: its tables (by prefix), its judgments source's tables (and the source,
    when the view reads all of its keys), and where each value was written."""

    tables: Mapping[str, Any]
    source_tables: Mapping[type, Any]
    source: Source | None
    given: frozenset[str]
    origins: Origins
    own_connection: bool = False
    #: further values of a key a command takes several of (``harness index --embed-model A --embed-model B``)
    more: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def table(self, kind: type[T]) -> T:
        """The built table of class ``kind`` (one of the view's)."""
        found = next((t for t in self.tables.values() if type(t) is kind), None)
        found = self.source_tables.get(kind, found)
        if found is None:
            raise KeyError(f"the command's view reads no {kind.__name__}")
        return found

    def connection(self) -> ConnectionSettings:
        """The cluster: ``connection.*`` over the environment (not read for a file's own ``[connection]``)."""
        return self.table(ConnectionTable).settings(own=self.own_connection)

    def fail(self, key: str, message: str) -> ConfigError:
        """A refusal of ``key``, named as the user wrote it."""
        return self.origins.fail(key, message)


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


def _not_read(view: View, name: str, given: Given) -> ConfigError:
    return ConfigError(
        f"{given.origin}: {view.command} does not read {name}: expected one of its keys, {', '.join(view.names())}"
    )


def _check_read(view: View, values: Mapping[str, Given]) -> None:
    """A flag or ``--set`` of a key the command does not read is refused (a file's is left for others)."""
    for name, given in values.items():
        if given.kind == FILE or view.reads(name) or name.startswith(PARAMS + "."):
            continue
        if name not in KEYS and not is_source_key(name):
            raise _unknown(name, given)
        raise _not_read(view, name, given)


def _tables(
    values: Mapping[str, Given], origins: Origins, view: View
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the view's tables built by prefix, the root keys' values); every value checked against its key."""
    grouped: dict[str, dict[str, Given]] = {prefix: {} for prefix in ALL_TABLES}
    root: dict[str, Any] = {}
    for name, given in values.items():
        if name.startswith(PARAMS + ".") or is_source_key(name):
            continue
        if name not in KEYS:
            raise _unknown(name, given)
        table, f = KEYS[name]
        if table is Experiment:
            origins.note(name, given)
            root[name] = coerce(f, field_types(Experiment)[name], given)
            continue
        prefix, short = name.split(".", 1)
        grouped[prefix][short] = given
    built: dict[str, Any] = {}
    for prefix, table in ALL_TABLES.items():
        if view.reads_table(prefix, table):
            built[prefix] = build_table(table, prefix, grouped[prefix], origins)
        else:
            _checked(table, prefix, grouped[prefix], origins)
    return built, root


def _checked(table: type, prefix: str, values: Mapping[str, Given], origins: Origins) -> None:
    """Each value checked against its key (a table the command does not read: it is left to others)."""
    kinds = field_types(table)
    fields = {f.name: f for f in dataclasses.fields(table)}
    for name, given in values.items():
        path = f"{prefix}.{name}" if prefix else name
        origins.note(path, given)
        coerce(fields[name], kinds[name], given)


def _source_name(view: View, judgments: Any, values: Mapping[str, Given], origins: Origins) -> str:
    if view.source is None:
        return str(judgments.source)
    chosen = values.get(f"{JUDGMENTS}.source")
    if chosen is not None and chosen.value != view.source:
        raise origins.fail(
            f"{JUDGMENTS}.source",
            f"{view.command} reads the {view.source} source's keys: expected {view.source}",
        )
    return view.source


def _source(
    view: View, built: Mapping[str, Any], values: Mapping[str, Given], origins: Origins
) -> tuple[dict[type, Any], Source | None]:
    """The judgments source's tables built from its keys (``judgments.KEY``), and the source when the view
    reads every key of it; each refusal at its key."""
    judgments = built.get(JUDGMENTS)
    if judgments is None and view.source is None:
        return {}, None
    name = _source_name(view, judgments, values, origins)
    kind = SOURCES[name]
    own = source_keys(kind)
    given = {n.removeprefix(JUDGMENTS + "."): g for n, g in values.items() if is_source_key(n)}
    unknown = sorted(set(given) - set(own))
    if unknown:
        raise origins.fail(f"{JUDGMENTS}.{unknown[0]}", _unknown_source_key(unknown[0], kind.name))
    tables: dict[type, Any] = {}
    for table in kind.tables:
        mine = {n: g for n, g in given.items() if own[n][0] is table}
        if any(view.reads(f"{JUDGMENTS}.{f.name}") for f in dataclasses.fields(table)):
            tables[table] = build_table(table, JUDGMENTS, mine, origins)
        else:
            _checked(table, JUDGMENTS, mine, origins)
    if len(tables) < len(kind.tables):
        return tables, None
    try:
        return tables, kind.from_tables([tables[t] for t in kind.tables])
    except SettingError as exc:
        raise origins.fail(f"{JUDGMENTS}.{exc.key}", exc.message) from None


def _unknown_source_key(name: str, source: str) -> str:
    owners = [s for s, kind in SOURCES.items() if name in source_keys(kind)]
    keys = ", ".join(source_keys(SOURCES[source]))
    where = f" (a key of {{{JUDGMENTS}.source}} = {' or '.join(owners)})" if owners else ""
    expected = f"expected some of {keys}" if keys else "it takes no keys of its own"
    return f"unknown key for {{{JUDGMENTS}.source}} = {source}{where}: {expected}"


def settings(
    view: View,
    file: Layer | None = None,
    given: Sequence[Layer] = (),
    *,
    flags: Mapping[str, str] | None = None,
) -> Settings:
    """The keys of ``view`` from ``file`` (a file's layer, if any) under ``given`` (flags, ``--set``), built.

    ``flags``: the command's flag of each key it has one, so that a refusal of a flag names other keys as
    flags too."""
    values, layer = merge(file, given)
    _check_read(view, values)
    origins = Origins(str(layer.source) if layer.source is not None else None, flags)
    built, _ = _tables(values, origins, view)
    tables, source = _source(view, built, values, origins)
    return Settings(built, tables, source, frozenset(values), origins, layer.own_connection)


def _fusion(parts: dict[str, Any], sweep: Any, origins: Origins) -> None:
    """The fusion parsed; tuned, a method with weights starts from equal ones (tuning replaces them)."""
    if "fusion" not in parts:
        return
    text = parts["fusion"]
    if not isinstance(text, str):
        raise origins.fail("fusion", f"expected a fusion such as rrf or wsum:weights=0.3/0.7, found {text!r}")
    try:
        parts["fusion"] = FusionSpec.parse(tuned_text(text, sweep.tune_on is not None))
    except ConfigError as exc:
        raise origins.fail("fusion", str(exc)) from None


def build(
    file: Layer | None = None, given: Sequence[Layer] = (), *, flags: Mapping[str, str] | None = None
) -> Experiment:
    """The experiment of ``file`` (the experiment file's layer, if any) and ``given`` (flags, ``--set``).

    ``flags``: the command line's flag of each key it has one for, so that a refusal of a flag names
    the other keys as flags too."""
    values, layer = merge(file, given)
    _check_read(RUN, values)
    origins = Origins(str(layer.source) if layer.source is not None else None, flags)
    built, root = _tables(values, origins, RUN)
    _fusion(root, built["sweep"], origins)
    name = root.pop("name", None) or (layer.source.stem if layer.source is not None else None)
    own: dict[str, Any] = {
        "source": layer.source,
        "sha256": layer.sha256,
        "own_connection": layer.own_connection,
    }
    tables = {prefix: built[prefix] for prefix in TABLES}
    exp = _with_arms(Experiment(name=name, **own, **tables, **root), layer, origins)
    _, source = _source(RUN, built, values, origins)
    assert source is not None
    exp = dataclasses.replace(exp, judgments=dataclasses.replace(exp.judgments, spec=source))
    check(exp, set(values), origins)
    exp = _with_params(exp, values, origins)
    return dataclasses.replace(exp, user_mapping=read_mapping(exp.index, origins))


def _with_arms(exp: Experiment, layer: Layer, origins: Origins) -> Experiment:
    """The file's ``[[arms]]`` and ``[[fused]]`` (a fused arm without a fusion takes the experiment's)."""
    base = layer.source.resolve().parent if layer.source is not None else Path.cwd()
    defaults = ArmDefaults(base, exp.embedding.model, exp.embedding.query_prompt, origins)
    tables = {name: g.value for name, g in layer.tables.items()}
    arm_keys = read_tables(ArmKeys, "arms", tables.get("arms"), defaults)
    fused_keys = read_tables(FusedKeys, "fused", tables.get("fused"), defaults)
    arms, fused = arms_and_fused(arm_keys, fused_keys, defaults, exp.fusion)
    return dataclasses.replace(exp, arms=arms, fused=fused, arm_keys=(*arm_keys, *fused_keys))


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
