"""The three sources of an experiment's values, each read into a :class:`~harness.experiment._build.Layer`:
an experiment file (TOML), the command line's flags, and its ``--set KEY=VALUE`` entries.

    name = "my-stack"                       # optional (default: the file's stem)
    mode = "hybrid"                         # the built-in arms; or the file's own [[arms]] (and [[fused]])

    [data]                                  # every table is optional; each key has its default
    datasets = ["sample"]                   # or: queries = "queries.tsv" and qrels = "judgments.csv"

    [search]
    depth = 100

    [sweep]                                 # tune a fused arm, every query scored held out
    tune_on = "kfold:5"
    grid = "method=rrf,wsum;weights=0.1..0.9/0.2"

Files written before the tables keep working: their top-level ``datasets``, ``queries``, ``qrels``,
``split``, ``depth``, ``num_candidates``, ``seed``, ``test``, ``alpha``, ``records`` and ``model`` are
read as the keys they became (:data:`LEGACY`).
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from base import ConfigError
from harness.experiment._build import Layer
from harness.experiment._registry import ALL_TABLES, ARRAY_TABLES, KEYS, PARAMS, secret_keys
from harness.keys import FILE, FLAG, SET, Given, set_given

#: top-level keys of experiment files written before the tables, and the keys they are now
LEGACY: dict[str, str] = {
    "datasets": "data.datasets",
    "queries": "data.queries",
    "qrels": "data.qrels",
    "split": "data.split",
    "depth": "search.depth",
    "num_candidates": "search.num_candidates",
    "seed": "stats.seed",
    "test": "stats.test",
    "alpha": "stats.alpha",
    "records": "output.records",
    "model": "embedding.model",
}
#: arrays of tables: the file's own arms
ARRAYS = tuple(ARRAY_TABLES)


def _read(path: Path) -> tuple[dict[str, Any], str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"experiment file not found: expected a TOML file at {path}") from None
    try:
        return tomllib.loads(raw.decode("utf-8")), hashlib.sha256(raw).hexdigest()
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: expected a TOML experiment file, it does not parse: {exc}") from None


def _put(layer: Layer, name: str, given: Given) -> None:
    if name in layer.values:
        raise ConfigError(f"{given.origin}: {name} is given twice (also as {layer.values[name].origin})")
    layer.values[name] = given


def _flatten(layer: Layer, prefix: str, table: Mapping[str, Any], file: str, base: Path) -> None:
    """A table's keys as dotted keys (``[sweep.params]``: ``sweep.params.ARM.PARAM``)."""
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if key == PARAMS and isinstance(value, dict):
            if not value:
                raise ConfigError(
                    f"{file}: {key}: expected ARM.PARAM = [values, ...] entries, found an empty table"
                )
            for arm, params in value.items():
                if not isinstance(params, dict):
                    raise ConfigError(
                        f"{file}: {key}.{arm}: unknown arm {arm!r}: expected ARM.PARAM = [values] with the key unquoted"
                    )
                for param, values in params.items():
                    path = f"{key}.{arm}.{param}"
                    _put(layer, path, Given(values, f"{file}: {path}", FILE, base))
            continue
        _put(layer, key, Given(value, f"{file}: {key}", FILE, base))


def read_file(path: Path | str) -> Layer:
    """An experiment file's values, tables and arms (every key checked by the builder, at its key path)."""
    path = Path(path)
    data, sha = _read(path)
    file, base = str(path), path.resolve().parent
    layer = Layer(source=path, sha256=sha, own_connection="connection" in data)
    for name, value in data.items():
        given = Given(value, f"{file}: {name}", FILE, base)
        if name in ARRAYS:
            layer.tables[name] = given
        elif name in ALL_TABLES:
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{file}: {name}: expected a table ([{name}]), found {type(value).__name__}"
                )
            _flatten(layer, name, value, file, base)
        elif name in LEGACY or name in KEYS:
            _put(layer, LEGACY.get(name, name), given)
        else:
            known = sorted({*ALL_TABLES, *ARRAYS, *LEGACY, *(k for k in KEYS if "." not in k)})
            raise ConfigError(f"{file}: {name}: unknown key: expected some of {', '.join(known)}")
    return layer


def flag_layer(values: Mapping[str, tuple[Any, str]]) -> Layer:
    """The command line's flags: ``{key: (value, how it was written)}``; None values were not given."""
    return Layer({k: Given(v, written, FLAG) for k, (v, written) in values.items() if v is not None})


def set_layer(entries: Iterable[str]) -> Layer:
    """``--set KEY=VALUE`` entries (values read as TOML values; text that is not one stays text).

    An entry may carry how the user wrote it (``written``: an old flag handed on as ``--set``)."""
    layer, secrets = Layer(), secret_keys()
    for entry in entries:
        written = getattr(entry, "written", None)  # an old flag: refusals name it, and keys as flags
        name = entry.partition("=")[0].strip()
        _put(layer, *set_given(entry, name in secrets, written))
    return layer


def value_layer(values: Mapping[str, Any]) -> Layer:
    """Values given in Python, by dotted key (``{"mode": "hybrid", "data.datasets": ["sample"]}``)."""
    return Layer({k: Given(v, f"{k}={v!r}", SET) for k, v in values.items() if v is not None})
