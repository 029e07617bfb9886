"""``harness report RUN_DIR [--html]`` and ``harness failures RUN_DIR``: read a finished run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.cli._options import Deprecated, output_option, with_deprecated
from harness.inspect import fmt, print_results, worst_queries, write_html
from harness.results import EvalRecord, RunResults, load_records

RunDirArg = Annotated[Path, typer.Argument(help="Run directory (holds results.json).", show_default=False)]


def _out() -> Console:
    return Console(highlight=False, soft_wrap=True)


@with_deprecated(Deprecated("--out", "output", kind=Path))
def report_command(
    run_dir: RunDirArg,
    html: Annotated[bool, typer.Option("--html", help="Write the self-contained HTML report.")] = False,
    output: Annotated[
        Path | None, output_option("HTML file to write (implies --html; default RUN_DIR/report.html).")
    ] = None,
) -> None:
    """Print every table of a run (all measures, timings, tests, agreement), or write its HTML report
    with --html."""
    console = _out()
    if html or output is not None:
        console.print(f"wrote {write_html(run_dir, output)}")
        return
    results = RunResults.load(run_dir)
    console.print(Text.assemble(("run ", "bold"), results.manifest.run_id))
    print_results(results, console, wide=True)


def _print_failure(console: Console, position: int, rec: EvalRecord) -> None:
    first = rec.first_relevant_rank
    console.print(
        Text.assemble(
            (f"{position:>2}. ", "bold"),
            (f"{rec.dataset} · {rec.arm} · {rec.query.id}", "bold cyan"),
            f"  nDCG@10 {fmt(rec.metrics.ndcg_at_10, 3)}",
            f"  first relevant {first if first is not None else 'none'}",
            f"  relevant {rec.relevant.retrieved}/{rec.relevant.total} retrieved",
        ),
        soft_wrap=True,
    )
    console.print(Text(f"    {rec.query.text}", style="italic"), soft_wrap=True)
    if rec.missed:
        table = Table(show_header=True, header_style="dim", box=None, padding=(0, 1), pad_edge=False)
        for col in ("missed doc", "grade", "retrieved by", "title"):
            table.add_column(col, overflow="fold")
        for m in rec.missed:
            table.add_row(m.id, str(m.grade), ", ".join(m.retrieved_by) or "no arm", m.title)
        console.print(table)


def failures_command(
    run_dir: RunDirArg,
    arm: Annotated[str | None, typer.Option("--arm", help="Only this arm (e.g. hybrid).")] = None,
    worst: Annotated[int, typer.Option("--worst", help="How many queries to list.")] = 10,
    dataset: Annotated[str | None, typer.Option("--dataset", help="Only this dataset.")] = None,
) -> None:
    """The worst queries of a run by nDCG@10, with the relevant documents each arm missed."""
    records = worst_queries(load_records(run_dir), arm=arm, dataset=dataset, worst=worst)
    console = _out()
    for position, rec in enumerate(records, 1):
        _print_failure(console, position, rec)
    if not records:
        console.print("no records")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
    app.command("failures")(failures_command)
