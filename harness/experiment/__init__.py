"""The experiment: one typed record of everything ``harness run`` is asked to do, and the one way to build it.

    exp = experiment("examples/experiment.toml", settings=["search.batch_size=64"])
    exp = experiment(values={"mode": "hybrid", "data.datasets": ["sample"]})
    run_dir, results = harness.run.run(exp)

* :mod:`._tables`: one frozen dataclass per concern (data, connection, index, embedding, expansion, rerank,
  sweep, load, ann, search, stats, output, judgments); each field is a dotted key with its default, once;
* :mod:`._model`: :class:`Experiment` (a mode's built-in arms or the file's own ``[[arms]]``, and the tables);
* :mod:`._sources`: the three sources (a TOML file, the command line's flags, ``--set KEY=VALUE``);
* :mod:`._build` and :mod:`._checks`: one validation, every refusal named as the user wrote it;
* :mod:`._arms`: ``[[arms]]``, ``[[fused]]`` and ``[sweep.params]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.experiment._build import RUN, Layer, Settings, View, build, settings
from harness.experiment._checks import arm_names, read_mapping
from harness.experiment._model import (
    DEFAULT_SUM_WEIGHTS,
    EXPERIMENT_MODE,
    Experiment,
    arms_identity,
    identity,
    key_values,
)
from harness.experiment._registry import (
    ALL_TABLES,
    ARRAY_TABLES,
    COMMAND_TABLES,
    KEYS,
    describe_keys,
    every_key,
    key_field,
)
from harness.experiment._sources import LEGACY, flag_layer, read_file, set_layer, value_layer
from harness.experiment._tables import (
    JUDGMENT_SOURCES,
    MAX_CANDIDATES,
    MAX_DEPTH,
    TABLES,
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


def experiment(
    file: Path | str | None = None,
    *,
    flags: Mapping[str, tuple[Any, str]] | None = None,
    settings: Sequence[str] = (),
    values: Mapping[str, Any] | None = None,
    flag_names: Mapping[str, str] | None = None,
) -> Experiment:
    """The experiment of ``file`` (if any), overridden by ``flags`` (``{key: (value, as written)}``), ``settings``
    (``--set KEY=VALUE`` entries) and ``values`` (Python values by dotted key)."""
    layers = [flag_layer(flags or {}), set_layer(settings), value_layer(values or {})]
    return build(read_file(file) if file is not None else None, layers, flags=flag_names)


__all__ = [
    "ALL_TABLES",
    "ARRAY_TABLES",
    "COMMAND_TABLES",
    "DEFAULT_SUM_WEIGHTS",
    "EXPERIMENT_MODE",
    "JUDGMENT_SOURCES",
    "KEYS",
    "LEGACY",
    "MAX_CANDIDATES",
    "MAX_DEPTH",
    "RUN",
    "TABLES",
    "AnnTable",
    "ConnectionTable",
    "DataTable",
    "EmbeddingTable",
    "EvalTable",
    "ExpansionTable",
    "Experiment",
    "IndexTable",
    "JudgmentsTable",
    "Layer",
    "LoadTable",
    "OutputTable",
    "RerankTable",
    "SearchTable",
    "Settings",
    "StatsTable",
    "SweepTable",
    "View",
    "arm_names",
    "arms_identity",
    "build",
    "describe_keys",
    "every_key",
    "experiment",
    "flag_layer",
    "identity",
    "key_field",
    "key_values",
    "read_file",
    "read_mapping",
    "set_layer",
    "settings",
    "value_layer",
]
