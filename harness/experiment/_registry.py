"""Every table of keys by its prefix, and every key by its dotted name: the one registry every command reads.

* :data:`TABLES`: the experiment's (``harness run`` reads them all);
* :data:`COMMAND_TABLES`: the keys of commands that do something else with them (``expand.*`` for
  ``harness expand``, ``sample.*`` and ``simulate.*`` for ``harness clicks queries`` / ``simulate``); an
  experiment file may hold them too, for those commands;
* the judgments sources' own keys (``judgments.KEY``, :data:`harness.judgments.sources.SOURCES`), which the
  source chosen by ``judgments.source`` (or the command) reads.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from harness.expand import ExpandKeys
from harness.experiment._arms import ArmKeys, FusedKeys
from harness.experiment._model import Experiment
from harness.experiment._tables import TABLES
from harness.judgments.clicks import QuerySetSpec, SimulationSpec
from harness.judgments.sources import SOURCES, Source
from harness.keys import declared, default_of

#: the arrays of tables of an experiment file (``[[arms]]``, ``[[fused]]``): the keys of each entry
ARRAY_TABLES: dict[str, type] = {"arms": ArmKeys, "fused": FusedKeys}
#: the tables of commands other than ``harness run``, by their prefix
COMMAND_TABLES: dict[str, type] = {"expand": ExpandKeys, "sample": QuerySetSpec, "simulate": SimulationSpec}
#: every table of keys by its prefix (the experiment's first, in the order of the docs)
ALL_TABLES: dict[str, type] = {**TABLES, **COMMAND_TABLES}
ROOT = ""  # the Experiment's own keys (name, mode, fusion) have no table prefix
PARAMS = "sweep.params"
JUDGMENTS = "judgments"

Field = dataclasses.Field[Any]


def _keys() -> dict[str, tuple[type, Field]]:
    out: dict[str, tuple[type, Field]] = {name: (Experiment, f) for name, f in declared(Experiment).items()}
    for prefix, table in ALL_TABLES.items():
        for name, f in declared(table).items():
            if f"{prefix}.{name}" != PARAMS:
                out[f"{prefix}.{name}"] = (table, f)
    return out


#: every dotted key a value can be given for (``sweep.params.ARM.PARAM`` and the sources' keys besides)
KEYS: dict[str, tuple[type, Field]] = _keys()


def source_keys(kind: type[Source]) -> dict[str, tuple[type, Field]]:
    """A judgments source's own keys (``llm``, not ``judgments.llm``), with the table that declares each."""
    return {name: (table, f) for table in kind.tables for name, f in declared(table).items()}


def is_source_key(name: str) -> bool:
    """Whether ``name`` is a key of a judgments source (``judgments.llm``), not of the judgments table."""
    return name.startswith(JUDGMENTS + ".") and name not in KEYS


def every_key() -> dict[str, Field]:
    """Every declared key by its dotted name, the sources' included (a key of two sources: the first's)."""
    out = {name: f for name, (_, f) in KEYS.items()}
    for kind in SOURCES.values():
        for name, (_, f) in source_keys(kind).items():
            out.setdefault(f"{JUDGMENTS}.{name}", f)
    return out


def secret_keys() -> frozenset[str]:
    """The keys whose values are never shown (how a ``--set`` of one was written leaves its value out)."""
    return frozenset(name for name, f in every_key().items() if f.metadata.get("secret"))


def _default(f: Field) -> str:
    value = default_of(f)
    return "" if value is None else repr(value)


def describe_keys() -> list[tuple[str, str, str]]:
    """(key, default, what it is) of every dotted key: the list ``--set`` takes (each judgments source's own
    keys after the tables', said with their source)."""
    tables = [(k, _default(f), f.metadata.get("doc", "")) for k, (_, f) in KEYS.items()]
    sources = [
        (f"{JUDGMENTS}.{name}", _default(f), f"{f.metadata.get('doc', '')} (source {source})")
        for source, kind in SOURCES.items()
        for name, (_, f) in source_keys(kind).items()
    ]
    return tables + sources


def key_field(name: str, source: str | None = None) -> tuple[Field, Any]:
    """The declaration of dotted key ``name`` and its type (a judgments source's key: of ``source``, else of
    the first source that has it)."""
    if name in KEYS:
        table, f = KEYS[name]
        return f, typing.get_type_hints(table)[f.name]
    short = name.removeprefix(JUDGMENTS + ".")
    kinds = [SOURCES[source]] if source is not None else list(SOURCES.values())
    for kind in kinds:
        found = source_keys(kind).get(short)
        if found is not None:
            table, f = found
            return f, typing.get_type_hints(table)[f.name]
    raise KeyError(f"no key {name}")
