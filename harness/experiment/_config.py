"""``ExperimentConfig``: an experiment file (TOML), read and validated once, every error at its key path.

    name = "my-stack"                       # optional (default: the file's stem)
    datasets = ["sample"]                   # or: queries = "queries.tsv" and qrels = "judgments.csv"
    depth = 100                             # and split, num_candidates, seed, test, alpha, records, model

    [connection]                            # optional: as --config's [connection] table
    url = "http://127.0.0.1:9200"

    [[arms]]                                # the first arm is the baseline the others are tested against
    name = "boosted"
    template_file = "boosted.mustache"      # relative to this file; or template = '''{...}''';
                                            # or template_file = "builtin:lexical" (the package's);
                                            # or stored_template = "id" (on the cluster: lang-mustache)
    index = "products-v2"                   # optional: default the dataset's harness index
    id_field = "sku"                        # optional: default _id
    model = "minilm"                        # for {{query_vector}} (and query_prompt)
    params = { title_boost = 2.0 }
    connection = { url = "http://127.0.0.1:9201" }   # optional: this arm's own cluster

    [[fused]]
    name = "hybrid"
    inputs = ["boosted", "knn"]
    fusion = "wsum:norm=min-max,weights=0.4/0.6"    # as --fusion

    [sweep]                                 # optional: tune a fused arm, every query scored held out
    arm = "hybrid"                          # default: the first fused arm
    tune_on = "kfold:5"                     # or a split: train
    grid = "method=rrf,wsum;weights=0.1..0.9/0.2"   # its fusion grid (default: the method's own
                                            # parameter; with [sweep.params] alone: its fusion as written)

    [sweep.params]                          # optional: template parameters of its inputs, jointly
    boosted.title_boost = [1.0, 2.0, 4.0]   # ARM.PARAM = [values]: a variable of the arm's template
    knn.num_candidates = [100, 400]         # (its params, or k / num_candidates)

Every problem is a :class:`ConfigError` that starts ``FILE: key.path:``.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.eval import FusionSpec
from harness.run import EXPERIMENT_MODE, RunConfig
from harness.strategies import ID_FIELD, FusedArm, TemplateArm
from harness.sweep import ParamAxis, ParamGrid
from harness.templates import (
    BUILTIN_PARAMS,
    BUILTIN_PREFIX,
    HARNESS_VARIABLES,
    VECTOR_VARIABLES,
    QueryTemplate,
    builtin_path,
)
from indexer import ConfigError, ConnectionSettings

TOP_KEYS = frozenset(
    {"name", "datasets", "queries", "qrels", "split", "depth", "num_candidates", "seed", "test", "alpha"}
    | {"records", "model", "connection", "arms", "fused", "sweep"}
)
SWEEP_KEYS = frozenset({"arm", "tune_on", "grid", "params"})
#: the harness's variables that ``[sweep.params]`` may set for an arm whose template uses them
SWEEPABLE = frozenset({"k", "num_candidates"})
ARM_KEYS = frozenset(
    {"name", "index", "template", "template_file", "stored_template", "id_field", "model", "query_prompt"}
    | {"params"}
    | {"connection", "compare_to"}
)
FUSED_KEYS = frozenset({"name", "inputs", "fusion", "compare_to"})
ENGINES = ("elasticsearch", "opensearch")


class _Table:
    """A TOML table read with its key path, so that every error says where it is."""

    def __init__(self, data: Mapping[str, Any], where: str, file: str) -> None:
        self.data, self.where, self.file = data, where, file

    def fail(self, key: str, message: str) -> ConfigError:
        path = f"{self.where}.{key}" if self.where else key
        return ConfigError(f"{self.file}: {path}: {message}")

    def check_keys(self, known: frozenset[str]) -> None:
        unknown = sorted(set(self.data) - known)
        if unknown:
            raise self.fail(unknown[0], f"unknown key: expected some of {', '.join(sorted(known))}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        value = self.data.get(key, default)
        if value is not None and not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.fail(key, f"expected {names}, found {type(value).__name__} {value!r}")
        if isinstance(value, bool) and kind in (int, float, (int, float)):
            raise self.fail(key, f"expected a number, found {value!r}")
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

    def tables(self, key: str) -> list[_Table]:
        value = self.get(key, list, [])
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{key}[{i}]", f"expected a table, found {type(item).__name__}")
            out.append(_Table(item, f"{key}[{i}]", self.file))
        return out


@dataclass(frozen=True, slots=True)
class ExperimentConfig:
    """An experiment: the run's settings, where its queries come from, its arms and fused arms."""

    path: Path
    sha256: str
    run: RunConfig
    arms: tuple[TemplateArm, ...]
    fused: tuple[FusedArm, ...]
    queries: Path | None = None
    qrels: Path | None = None
    connection: ConnectionSettings | None = None  # the file's [connection] table (None: flags and env)
    swept: str | None = None  # the fused arm [sweep] tunes (run.tune_on, run.sweep: how and over what)
    params: ParamGrid | None = None  # [sweep.params]: its inputs' template parameters, swept jointly

    @property
    def swept_arm(self) -> FusedArm | None:
        return next((f for f in self.fused if f.name == self.swept), None)

    def identity(self) -> dict[str, Any]:
        """What changes results: every arm's template, params, index and id field, every fusion."""
        return {
            "arms": [
                {
                    "name": a.name,
                    "templates": {p: t.text for p, t in a.templates.items()},
                    "params": dict(a.params),
                    "index": a.index,
                    "id_field": a.id_field,
                    "model": a.model,
                    "query_prompt": a.query_prompt,
                    "url": a.connection.url if a.connection else None,
                }
                for a in self.arms
            ],
            "fused": [
                {"name": f.name, "inputs": list(f.inputs), "fusion": str(f.fusion)} for f in self.fused
            ],
            "swept": self.swept,
        } | ({"sweep_params": str(self.params)} if self.params is not None else {})


def _template_text(table: _Table, base: Path) -> dict[str, tuple[str, str]]:
    """engine ("" = any) -> (text, where it came from), from ``template`` or ``template_file``."""
    inline, file = table.text("template"), table.text("template_file")
    if (inline is None) == (file is None):
        raise table.fail("template", "expected exactly one of template (inline) or template_file")
    if inline is not None:
        return {"": (inline, f"{table.file}: {table.where}.template")}
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


def _connection(table: _Table, key: str) -> ConnectionSettings | None:
    value = table.get(key, dict)
    if value is None:
        return None
    try:
        return ConnectionSettings.resolve(value, env={})
    except ConfigError as exc:
        raise table.fail(key, str(exc)) from None


def _arm(table: _Table, base: Path, default_model: str | None) -> TemplateArm:
    table.check_keys(ARM_KEYS)
    name = table.text("name")
    if name is None:
        raise table.fail("name", "expected the arm's name, found none")
    params = table.get("params", dict, {})
    clash = sorted(set(params) & set(HARNESS_VARIABLES))
    if clash:
        raise table.fail("params", f"{', '.join(clash)}: the harness fills these variables; use other names")
    model = table.text("model", default_model)
    stored = table.text("stored_template")
    if stored is not None and ("template" in table.data or "template_file" in table.data):
        raise table.fail("stored_template", "expected one of template, template_file or stored_template")
    if str(table.data.get("template_file", "")).startswith(BUILTIN_PREFIX):
        params = {**BUILTIN_PARAMS, **params}
    templates = {} if stored is not None else _templates(table, base, set(params), model)
    uses_vector = any(t.needs_vector for t in templates.values()) or stored is not None
    return TemplateArm(
        name=name,
        templates=templates,
        params=params,
        index=table.text("index"),
        id_field=table.text("id_field", ID_FIELD) or ID_FIELD,
        model=model if uses_vector else None,
        query_prompt=table.text("query_prompt"),
        connection=_connection(table, "connection"),
        compare_to=table.names("compare_to"),
        stored_template=stored,
    )


def _templates(table: _Table, base: Path, params: set[str], model: str | None) -> dict[str, QueryTemplate]:
    templates = {}
    for engine, (text, source) in _template_text(table, base).items():
        template = QueryTemplate.parse(text, source, set(HARNESS_VARIABLES) | params)
        if template.needs_vector and model is None:
            used = ", ".join("{{" + v + "}}" for v in sorted(VECTOR_VARIABLES & template.variables))
            raise table.fail("model", f"the template uses {used}: expected a model to embed queries with")
        templates[engine] = template
    return templates


def _fused(table: _Table, arms: list[str]) -> FusedArm:
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
    try:
        fusion = FusionSpec.parse(table.text("fusion", "rrf") or "rrf")
    except ConfigError as exc:
        raise table.fail("fusion", str(exc)) from None
    if fusion.weights is not None and len(fusion.weights) != len(inputs):
        raise table.fail(
            "fusion", f"expected {len(inputs)} weights (one per input), found {len(fusion.weights)}"
        )
    return FusedArm(name, inputs, table.names("compare_to") or inputs[:1], fusion=fusion)


def _read(path: Path) -> tuple[dict[str, Any], str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"experiment file not found: expected a TOML file at {path}") from None
    try:
        return tomllib.loads(raw.decode("utf-8")), hashlib.sha256(raw).hexdigest()
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: expected a TOML experiment file, it does not parse: {exc}") from None


def _data_source(top: _Table, base: Path) -> tuple[tuple[str, ...], Path | None, Path | None]:
    """(datasets, queries file, judgments file): datasets, or a queries file with its judgments."""
    datasets = top.names("datasets")
    files = {key: top.text(key) for key in ("queries", "qrels")}
    if datasets and any(files.values()):
        raise top.fail("datasets", "expected datasets or queries + qrels, found both")
    if not datasets:
        missing = [key for key, value in files.items() if value is None]
        if missing:
            raise top.fail(
                missing[0], "expected datasets = [...] or both queries and qrels files, found neither"
            )
        queries, qrels = ((base / str(files[k])).resolve() for k in ("queries", "qrels"))
        return (), queries, qrels
    return datasets, None, None


def _sweep(top: _Table) -> tuple[str | None, dict[str, Any]]:
    """``[sweep]``: (the fused arm it tunes or None for the first, RunConfig's tune_on and sweep)."""
    value = top.get("sweep", dict)
    if value is None:
        return None, {}
    table = _Table(value, "sweep", top.file)
    table.check_keys(SWEEP_KEYS)
    tune_on = table.text("tune_on")
    if tune_on is None:
        raise table.fail("tune_on", "expected how to hold queries out: train (a split) or kfold[:K]")
    return table.text("arm"), {"tune_on": tune_on, "sweep": table.text("grid")}


def _run_config(top: _Table, datasets: tuple[str, ...], overrides: Mapping[str, Any]) -> RunConfig:
    settings = {
        "split": top.text("split"),
        "depth": top.get("depth", int, 100),
        "num_candidates": top.get("num_candidates", int),
        "seed": top.get("seed", int, 42),
        "test": top.text("test", "randomization"),
        "alpha": top.get("alpha", (int, float), 0.05),
        "records": top.text("records", "jsonl,es"),
        **_sweep(top)[1],
    }
    try:
        return RunConfig(
            mode=EXPERIMENT_MODE,
            experiment=top.file,
            datasets=datasets,
            **{**settings, **{k: v for k, v in overrides.items() if v is not None}},
        )
    except ConfigError as exc:
        raise ConfigError(f"{top.file}: {exc}") from None


def _unique(top: _Table, kind: str, names: list[str], offset: int = 0) -> None:
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise top.fail(
                f"{kind}[{i - offset}].name", f"the arm name {name!r} is used twice: expected unique names"
            )


def load_experiment(
    path: Path | str, *, judged: tuple[Path, Path] | None = None, **overrides: Any
) -> ExperimentConfig:
    """Read and validate the experiment file at ``path``. ``judged``: (queries, judgments) files that
    replace the file's data (``--queries``/``--qrels``); ``overrides`` are RunConfig fields given on the
    command line (``output``, ``records``, ``progress``, ``search``...; None: the file's)."""
    path = Path(path)
    data, sha = _read(path)
    base = path.resolve().parent
    top = _Table(data, "", str(path))
    top.check_keys(TOP_KEYS)
    datasets, queries, qrels = ((), *judged) if judged is not None else _data_source(top, base)
    name = top.text("name", path.stem) or path.stem
    run = _run_config(top, datasets or (name,), overrides)
    default_model = top.text("model")
    arms = [_arm(t, base, default_model) for t in top.tables("arms")]
    if not arms:
        raise top.fail("arms", "expected at least one [[arms]] table, found none")
    if queries is not None:
        for i, arm in enumerate(arms):
            if arm.index is None:
                raise top.fail(
                    f"arms[{i}].index",
                    "expected the index to search: with queries and qrels files there is no dataset to build one from",
                )
    # the first arm is the baseline (production): the others are tested against it unless they say otherwise
    arms = [
        a if a.compare_to or i == 0 else replace(a, compare_to=(arms[0].name,)) for i, a in enumerate(arms)
    ]
    names = [a.name for a in arms]
    _unique(top, "arms", names)
    fused = [_fused(t, names) for t in top.tables("fused")]
    every = names + [f.name for f in fused]
    _unique(top, "fused", every, offset=len(names))
    compared: list[tuple[str, tuple[str, ...]]] = [(f"arms[{i}]", a.compare_to) for i, a in enumerate(arms)]
    compared += [(f"fused[{i}]", f.compare_to) for i, f in enumerate(fused)]
    for where, compare_to in compared:
        unknown = [c for c in compare_to if c not in every]
        if unknown:
            raise top.fail(
                f"{where}.compare_to",
                f"unknown arm {unknown[0]!r}: expected one of {', '.join(every)}",
            )
    swept = _swept(top, fused)
    params = _param_grid(top, arms, next((f for f in fused if f.name == swept), None), run.depth)
    return ExperimentConfig(
        path,
        sha,
        run,
        tuple(arms),
        tuple(fused),
        queries,
        qrels,
        _connection(top, "connection"),
        swept,
        params,
    )


def _swept(top: _Table, fused: list[FusedArm]) -> str | None:
    """The fused arm ``[sweep]`` tunes: the one it names, or the first."""
    if "sweep" not in top.data:
        return None
    name = _sweep(top)[0]
    names = [f.name for f in fused]
    if not names:
        raise top.fail("sweep", "expected a [[fused]] arm to tune (the sweep chooses its fusion), found none")
    if name is not None and name not in names:
        raise top.fail("sweep.arm", f"unknown fused arm {name!r}: expected one of {', '.join(names)}")
    return name or names[0]


def _sweepable(arm: TemplateArm) -> set[str]:
    """The params ``[sweep.params]`` may set for ``arm``: its template's variables among its params,
    ``k`` and ``num_candidates`` (a stored template's variables are the engine's: its params)."""
    settable = set(arm.params) | SWEEPABLE
    if arm.stored_template is not None:
        return settable
    return {v for t in arm.templates.values() for v in t.variables} & settable


def _param_grid(top: _Table, arms: list[TemplateArm], swept: FusedArm | None, depth: int) -> ParamGrid | None:
    """``[sweep.params]``: ``ARM.PARAM = [values]`` for inputs of the swept arm, each checked at its key path."""
    sweep = top.data.get("sweep")
    if not isinstance(sweep, dict) or "params" not in sweep:
        return None
    value = _Table(sweep, "sweep", top.file).get("params", dict)
    table = _Table(value, "sweep.params", top.file)
    if not value:
        raise top.fail("sweep.params", "expected ARM.PARAM = [values, ...] entries, found an empty table")
    assert swept is not None  # _swept: a [sweep] has a fused arm to tune
    by_name = {a.name: a for a in arms}
    axes: list[ParamAxis] = []
    for name, entries in value.items():
        if name not in swept.inputs:
            what = "arm" if name in by_name else "unknown arm"
            raise table.fail(
                name,
                f"{what} {name!r}: expected an input of the swept arm {swept.name} ({', '.join(swept.inputs)}), "
                "as ARM.PARAM = [values] with the key unquoted",
            )
        if not isinstance(entries, dict):
            raise table.fail(name, f"expected PARAM = [values] entries for arm {name}, found {entries!r}")
        axes += _axes(_Table(entries, f"sweep.params.{name}", top.file), by_name[name], depth)
    return ParamGrid(tuple(axes))


def _axes(table: _Table, arm: TemplateArm, depth: int) -> list[ParamAxis]:
    known = _sweepable(arm)
    axes = []
    for param, values in table.data.items():
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
        axes.append(ParamAxis(arm.name, param, tuple(values)))
    ks = next((a.values for a in axes if a.param == "k"), (depth,))
    for axis in (a for a in axes if a.param == "num_candidates" and "k" in known):
        low = min(axis.values)
        if low < max(ks):
            raise table.fail(
                "num_candidates", f"{low} is below k={max(ks)}: the engines refuse num_candidates < k"
            )
    return axes
