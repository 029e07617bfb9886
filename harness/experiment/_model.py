"""``Experiment``: everything a run is asked to do, one typed record whoever fills it.

A TOML file (``harness run --experiment FILE``), ``harness run MODE [flags]`` and ``--set KEY=VALUE`` all
build this record through one builder (:mod:`._build`), so a bad value fails the same way from each,
named as the user wrote it. Its arms are a mode's built-in arms (``mode``) or the file's own
(``[[arms]]``, ``[[fused]]``); every other concern is a table (:mod:`._tables`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from harness.ann import SweepOptions
from harness.eval import FusionSpec
from harness.experiment._tables import (
    TABLES as TABLE_NAMES,
)
from harness.experiment._tables import (
    AnnTable,
    ConnectionTable,
    DataTable,
    EmbeddingTable,
    EvalTable,
    ExpansionTable,
    IndexTable,
    JudgmentsTable,
    LoadTable,
    OutputTable,
    RerankTable,
    SearchTable,
    StatsTable,
    SweepTable,
)
from harness.keys import OUTPUT, RESULTS, declared, key
from harness.load import LoadOptions
from harness.rerank import RerankSpec
from harness.strategies import MODES, FusedArm, TemplateArm
from harness.sweep import SweepSpec, TuneOn, parse_tune_on
from indexer import ConnectionSettings, IndexOptions, UserMapping

#: the label of a run whose arms an experiment file declares (its run directory: runs/experiment-...)
EXPERIMENT_MODE = "experiment"
#: the in-engine weighted sum's (lexical, vector) weights when neither the fusion nor tuning gives any
DEFAULT_SUM_WEIGHTS = (1.0, 1.0)
DEFAULT_FUSION = "rrf"


@dataclass(frozen=True, slots=True)
class Experiment:
    """One experiment: its arms, and one table per concern (see the module doc)."""

    name: str | None = key(affects=OUTPUT, doc="the experiment's name (default: the file's stem)")
    mode: str | None = key(
        affects=RESULTS, choices=lambda: MODES, doc="lexical, vector or hybrid: the built-in arms"
    )
    fusion: FusionSpec = key(
        FusionSpec.parse(DEFAULT_FUSION), affects=RESULTS, doc="rrf[:k=60] | wsum[:weights=a/b] | ..."
    )
    arms: tuple[TemplateArm, ...] = ()
    fused: tuple[FusedArm, ...] = ()
    data: DataTable = field(default_factory=DataTable)
    connection: ConnectionTable = field(default_factory=ConnectionTable)
    index: IndexTable = field(default_factory=IndexTable)
    embedding: EmbeddingTable = field(default_factory=EmbeddingTable)
    expansion: ExpansionTable = field(default_factory=ExpansionTable)
    rerank: RerankTable = field(default_factory=RerankTable)
    sweep: SweepTable = field(default_factory=SweepTable)
    load: LoadTable = field(default_factory=LoadTable)
    ann: AnnTable = field(default_factory=AnnTable)
    search: SearchTable = field(default_factory=SearchTable)
    stats: StatsTable = field(default_factory=StatsTable)
    eval: EvalTable = field(default_factory=EvalTable)
    output: OutputTable = field(default_factory=OutputTable)
    judgments: JudgmentsTable = field(default_factory=JudgmentsTable)
    #: the experiment file (None: built from a mode and flags) and its bytes' sha256
    source: Path | None = None
    sha256: str | None = None
    #: the keys of the file's [[arms]] and [[fused]] tables, as given (the config hash reads them)
    arm_keys: tuple[Any, ...] = field(default=(), repr=False)
    #: index.mapping read and checked (by the builder)
    user_mapping: UserMapping | None = field(default=None, repr=False, compare=False)
    #: whether the connection table is the file's own [connection] (then the environment is not read)
    own_connection: bool = False

    @property
    def label(self) -> str:
        """The mode, or ``experiment`` for the file's own arms (the run directory's name starts with it)."""
        return self.mode or EXPERIMENT_MODE

    @property
    def datasets(self) -> tuple[str, ...]:
        """The datasets evaluated: the data table's, or with queries and qrels files the experiment's name."""
        return (self.name or "queries",) if self.data.queries is not None else self.data.datasets

    @property
    def progress(self) -> bool:
        return not self.output.quiet

    @property
    def tuning(self) -> TuneOn | None:
        """``sweep.tune_on`` parsed: a train split or k folds."""
        return parse_tune_on(self.sweep.tune_on) if self.sweep.tune_on is not None else None

    @property
    def grid(self) -> SweepSpec | None:
        """``sweep.grid`` parsed (None: each tuned arm's own method's parameter)."""
        return SweepSpec.parse(self.sweep.grid) if self.sweep.grid is not None else None

    @property
    def sum_weights(self) -> tuple[float, float]:
        """(lexical, vector) weights of the in-engine weighted sum: the fusion's two weights, if it has them."""
        weights = self.fusion.weights
        return (weights[0], weights[1]) if weights is not None and len(weights) == 2 else DEFAULT_SUM_WEIGHTS

    @property
    def rerank_spec(self) -> RerankSpec | None:
        if self.rerank.model is None:
            return None
        spec = RerankSpec.parse(self.rerank.model)
        return RerankSpec(spec.model, self.rerank.depth, spec.kind) if self.rerank.depth is not None else spec

    @property
    def load_options(self) -> LoadOptions | None:
        """The load phase's options, when ``load.enabled``."""
        t = self.load
        if not t.enabled:
            return None
        return LoadOptions(t.clients, t.duration, t.iterations, t.target_throughput, t.warmup, t.timeout)

    @property
    def ann_sweep(self) -> SweepOptions | None:
        return SweepOptions(self.ann.index_types, self.ann.candidates) if self.ann.sweep else None

    @property
    def swept_arm(self) -> FusedArm | None:
        """The fused arm ``[sweep]`` tunes: the one it names, or the first."""
        if self.tuning is None or not self.fused:
            return None
        return next((f for f in self.fused if f.name == (self.sweep.arm or self.fused[0].name)), None)

    def connection_settings(self) -> ConnectionSettings:
        """The cluster the run searches: the connection table over the environment (not read when the file
        brings its own [connection]), the connection file and the stack's file."""
        return self.connection.settings(own=self.own_connection)

    def index_options(self) -> IndexOptions:
        """How the run builds its indices: the index table's keys, with index.mapping read."""
        return self.index.options(self.user_mapping, self.progress)


def key_values(exp: Experiment) -> Iterator[tuple[str, str, Any]]:
    """(dotted key, what it affects, value as the config hash reads it) of every key of the experiment, its
    judgments source's included."""
    tables: list[tuple[str, Any]] = [("", exp)]
    tables += [(f.name, getattr(exp, f.name)) for f in _TABLE_FIELDS]
    tables += [("judgments", t) for t in exp.judgments.spec.key_tables()]
    for prefix, table in tables:
        for name, f in declared(type(table)).items():
            value, canonical = getattr(table, name), f.metadata.get("canonical")
            if canonical is not None and value is not None:
                value = canonical(value)
            yield (f"{prefix}.{name}" if prefix else name), f.metadata["affects"], value


def plain(value: Any) -> Any:
    """A key's value as JSON holds it: lists for tuples, text for paths, dates and parsed kinds."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    return value.isoformat() if isinstance(value, date) else str(value)


def identity(exp: Experiment) -> dict[str, Any]:
    """What of the experiment changes results, from the keys' declarations: every key that affects results
    (``key(affects=RESULTS)``), by its dotted name; the file's own arms; what the judgments source's keys resolve
    to (a template's hash). The plan adds what the run resolved (data fingerprints, engine, analysis chain,
    models); keys that affect only performance or output are left out, so that changing them resumes a run."""
    data: dict[str, Any] = {
        name: plain(value) for name, affects, value in key_values(exp) if affects == RESULTS
    }
    data["datasets"] = list(exp.datasets)  # (with queries and qrels files: the experiment's name)
    if exp.user_mapping is not None:
        data["user_mapping"] = exp.user_mapping.identity()
    if exp.arms:
        data["experiment"] = arms_identity(exp)
    resolved = exp.judgments.spec.identity()
    if resolved:
        data["judgments"] = resolved
    return data


def arms_identity(exp: Experiment) -> dict[str, Any]:
    """What changes results of the file's own arms: each ``[[arms]]`` and ``[[fused]]`` table's keys that affect
    results (from their declarations), with what its templates read, and the arm the sweep tunes."""
    swept = exp.swept_arm
    texts = [{p: t.text for p, t in a.templates.items()} for a in exp.arms] + [{} for _ in exp.fused]
    tables = [
        {
            name: plain(getattr(keys, name))
            for name, f in declared(type(keys)).items()
            if f.metadata["affects"] == RESULTS
        }
        | ({"templates": text} if text else {})
        for keys, text in zip(exp.arm_keys, texts, strict=True)
    ]
    return {"arms": tables, "swept": swept.name if swept is not None else None}


#: the experiment's tables (its fields that hold one)
_TABLE_FIELDS = tuple(f for f in dataclasses.fields(Experiment) if f.name in TABLE_NAMES)
