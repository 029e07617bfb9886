"""``harness pool RUN_DIR`` and ``harness rescore RUN_DIR --qrels FILE``: judge what a run left unjudged."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli._common import console
from harness.cli._options import Deprecated, output_option, with_deprecated
from harness.cli._views import Flag, with_keys
from harness.experiment import JudgmentsTable, Settings, View
from harness.inspect import judgments_line, print_table
from harness.judgments import (
    RescoreRequest,
    RunData,
    pool_dataset,
    pool_folder,
    pool_table,
    rescore,
    rescore_table,
    write_pool,
)
from harness.judgments.sources import PoolKeys
from harness.results import RunResults
from indexer import JUDGMENT_FORMATS

RunDirArg = Annotated[
    Path, typer.Argument(help="Run directory (holds results.json and runs/).", show_default=False)
]
DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data", help="Folder holding the run's dataset, if it moved (its fingerprint is checked)."
    ),
]


#: ``harness pool``: the pool of the judge source (``judgments.depth``, ``judgments.arms``), as flags
POOL = View("harness pool", source="judge", source_keys=("depth", "arms"))
POOL_FLAGS = (
    Flag("judgments.depth", ("--depth",), source="judge"),
    Flag("judgments.arms", ("--arms",), metavar="ARMS", source="judge"),
)
#: ``harness rescore``: how the file's judgments meet the run's (``judgments.mode``), as an experiment's do
RESCORE = View("harness rescore", keys=("judgments.mode",))
RESCORE_FLAGS = (Flag("judgments.mode", ("--mode",)),)


def _names(values: list[str] | None) -> list[str]:
    return [n.strip() for v in values or [] for n in v.split(",") if n.strip()]


@with_deprecated(Deprecated("--out", "output", kind=Path))
@with_keys(POOL, POOL_FLAGS)
def pool_command(
    run_dir: RunDirArg,
    dataset: Annotated[
        list[str] | None, typer.Option("--dataset", help="Only this dataset (repeatable).")
    ] = None,
    output: Annotated[Path | None, output_option("Folder to write (default RUN_DIR/pool).")] = None,
    data: DataOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a judging sheet that holds ratings.")
    ] = False,
    *,
    keys: Settings,
) -> None:
    """Write the unjudged (query, document) pairs in the top of a run's arms, to judge (CSV, Quepid, TREC)."""
    wanted = keys.table(PoolKeys)
    run = RunData.load(run_dir)
    target = output or Path(run_dir) / "pool"
    names = run.datasets(_names(dataset))
    pools = [pool_dataset(run, name, list(wanted.arms), wanted.depth, data) for name in names]
    print_table(pool_table(pools), console)
    for pool in pools:
        files = write_pool(pool, target, force=force)
        console.print(
            f"{pool.dataset.name}: {len(pool.entries)} unjudged pairs over {pool.queries} queries → "
            + ", ".join(str(f) for f in files),
            highlight=False,
        )
        if pool.missing_documents:
            console.print(
                f"  note: {len(pool.missing_documents)} pooled documents are not in the corpus (title and text "
                f"left blank), e.g. {', '.join(pool.missing_documents[:3])}",
                highlight=False,
            )
        if pool.comma_queries:
            console.print(
                f"  note: {pool.comma_queries} queries have a comma in their text; Quepid's import dialog counts "
                "columns by splitting lines on commas and refuses those lines (its /api/import/ratings takes them)",
                highlight=False,
            )
    sheets = " ".join(str(pool_folder(target, p.dataset.name) / "pool.csv") for p in pools)
    console.print(
        f"next: fill in the rating column of {sheets}, then: harness rescore {run_dir} --qrels <that file>",
        highlight=False,
    )


@with_deprecated(Deprecated("--out", "output", kind=Path))
@with_keys(RESCORE, RESCORE_FLAGS)
def rescore_command(
    run_dir: RunDirArg,
    qrels: Annotated[
        Path, typer.Option("--qrels", help="Judgments file (TREC qrels, TSV/CSV, Quepid CSV, RRE JSON).")
    ],
    fmt: Annotated[
        str | None,
        typer.Option("--format", help=f"{', '.join(JUDGMENT_FORMATS)} (default: recognised from the file)."),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="The dataset the judgments are for.")
    ] = None,
    output: Annotated[
        Path | None, output_option("New run directory (default RUN_DIR/rescored/<file>-<sha8>).")
    ] = None,
    data: DataOpt = None,
    *,
    keys: Settings,
) -> None:
    """Score a run again with more judgments, from its TREC files (no query is sent again)."""
    mode = keys.table(JudgmentsTable).mode
    request = RescoreRequest(Path(run_dir), qrels, fmt, dataset, mode=mode, out=output, data_path=data)
    before = RunResults.load(run_dir)
    out_dir, results = rescore(request)
    assert results.manifest.rescore is not None
    for applied in results.manifest.rescore.judgments:
        console.print(
            f"{applied.path} ({applied.format}): {applied.judgments} judgments for {applied.dataset}, "
            f"{applied.added} new, {applied.changed} changed, {applied.unknown} for unknown queries left out, "
            f"{applied.ungraded} rows without a grade left out",
            highlight=False,
        )
        name = applied.dataset
        console.print(judgments_line(results.datasets[name]), highlight=False, soft_wrap=True)
        print_table(rescore_table(name, before.datasets[name], results.datasets[name]), console)
    console.print(
        f"\nre-scored run directory: {out_dir}  (the original {run_dir} is unchanged)", highlight=False
    )


def register(app: typer.Typer) -> None:
    app.command("pool")(pool_command)
    app.command("rescore")(rescore_command)
