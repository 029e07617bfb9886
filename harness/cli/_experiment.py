"""``harness run --experiment FILE [--queries F --qrels F]``: the experiment options of ``harness run``.

:func:`with_experiment` gives a command these options. Given ``--experiment``, the experiment file's
arms run (with the command's ``--output``, ``--records``, ``--progress``, msearch and connection
options) instead of the mode's; otherwise the command runs as it is.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from harness._search import SearchOptions
from harness.cli._common import CONNECTION_OPTIONS, connection_settings, console
from harness.experiment import load_experiment, run_experiment
from harness.inspect import dataset_tables, print_table
from harness.strategies import MODES
from indexer import ConfigError

ExperimentOpt = Annotated[
    Path | None,
    typer.Option(
        "--experiment", help="Run this experiment file's arms (TOML: templates, indices, judgments)."
    ),
]
QueriesOpt = Annotated[
    Path | None,
    typer.Option("--queries", help="With --experiment: your queries (JSONL {_id,text} or TSV id<TAB>text)."),
]
QrelsOpt = Annotated[
    Path | None,
    typer.Option(
        "--qrels", help="With --queries: their judgments (TREC qrels, TSV/CSV, Quepid CSV, RRE JSON)."
    ),
]
#: (name, annotation) of the options this adds, all defaulting to None
EXPERIMENT_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("experiment", ExperimentOpt),
    ("queries", QueriesOpt),
    ("qrels", QrelsOpt),
)

#: the command's options an experiment takes (the others are the experiment file's to set)
TAKEN = frozenset(
    {"mode", "output", "records", "progress", "batch_size", "concurrency", "timeout", "max_retries"}
    | {name for name, _, _ in CONNECTION_OPTIONS}
)

F = TypeVar("F", bound=Callable[..., Any])


def with_experiment(func: F) -> F:
    """Give ``harness run`` the experiment options (listed after its others)."""
    signature = inspect.signature(func, eval_str=True)
    params = list(signature.parameters.values())
    defaults = {p.name: p.default for p in params}
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)
        for name, annotation in EXPERIMENT_OPTIONS
    ]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        path, queries, qrels = (kwargs.pop(name, None) for name, _ in EXPERIMENT_OPTIONS)
        if path is None and queries is None and qrels is None and kwargs.get("mode"):
            return func(*args, **kwargs)
        given = [
            name
            for name, default in defaults.items()
            if name not in TAKEN and kwargs.get(name, default) != default
        ]
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            raise ConfigError(
                f"an experiment takes its settings from its file: expected none of {flags} with it"
            )
        return run_experiment_command(path, (queries, qrels), kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*params, *extra])  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def run_experiment_command(
    path: Path | None, judged: tuple[Path | None, Path | None], flags: dict[str, Any]
) -> None:
    """The experiment at ``path`` with the command's ``flags`` (edge options, msearch, connection)."""
    mode = flags.get("mode")
    if path is None and mode:
        raise ConfigError(
            "--queries and --qrels go with --experiment FILE, whose arms name the index to search"
        )
    if path is None or mode:
        raise ConfigError(
            f"expected a mode ({', '.join(MODES)}) or --experiment FILE, exactly one, "
            f"found {'both' if mode else 'neither'}"
        )
    queries, qrels = judged
    if (queries is None) != (qrels is None):
        raise ConfigError("expected --queries and --qrels together (your queries and their judgments)")
    conn = connection_settings(**{name: flags.get(name, default) for name, _, default in CONNECTION_OPTIONS})
    search = SearchOptions(flags["batch_size"], flags["concurrency"], flags["timeout"], flags["max_retries"])
    exp = load_experiment(
        path,
        judged=(queries, qrels) if queries is not None and qrels is not None else None,
        output=flags.get("output"),
        records=flags.get("records"),
        progress=flags.get("progress", True),
        search=search,
    )
    run_dir, results = run_experiment(exp, conn, console=console)
    for name, ds in results.datasets.items():
        for table in dataset_tables(name, ds):
            print_table(table, console)
    console.print(
        f"\nrun directory: {run_dir}  (results.json, report.md, per_query.jsonl, runs/, records.jsonl)"
    )
