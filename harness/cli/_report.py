"""``harness report RUN_DIR [--html]`` and ``harness failures RUN_DIR``: read a finished run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.inspect import load_records, load_results, worst_queries, write_html
from harness.inspect._markdown import COLUMNS, SIG_MARK, fmt, paper_cells, significance_marks

RunDirArg = Annotated[Path, typer.Argument(help="Run directory (holds results.json).", show_default=False)]


def _out() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:  # piped: do not squeeze the tables into 80 columns
        console = Console(highlight=False, width=160)
    return console


def report_command(
    run_dir: RunDirArg,
    html: Annotated[bool, typer.Option("--html", help="Write the self-contained HTML report.")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="HTML file to write (default RUN_DIR/report.html).")
    ] = None,
) -> None:
    """Print the per-dataset tables of a run, or write its HTML report with --html."""
    if html:
        path = write_html(run_dir, out)
        _out().print(f"wrote {path}")
        return
    results = load_results(run_dir)
    console = _out()
    manifest = results.get("manifest") or {}
    console.print(Text.assemble(("run ", "bold"), str(manifest.get("run_id", run_dir))))
    for name, data in results["datasets"].items():
        significance = data.get("significance") or []
        paper = paper_cells(data.get("paper"))
        table = Table(title=name, title_justify="left")
        table.add_column("arm")
        for _, header in COLUMNS:
            table.add_column(header, justify="right")
        table.add_column("p50 ms", justify="right")
        for arm, info in (data.get("arms") or {}).items():
            metrics = info.get("metrics") or {}
            cells = []
            for measure, _ in COLUMNS:
                cell = fmt(metrics.get(measure))
                ci = (info.get("ci95") or {}).get(measure)
                if measure == "ndcg@10" and ci:
                    cell += f" [{fmt(ci[0], 3)},{fmt(ci[1], 3)}]"
                marks = significance_marks(significance, arm, measure)
                if marks:
                    cell += f" {SIG_MARK}{','.join(marks)}"
                cells.append(cell)
            table.add_row(arm, *cells, fmt((info.get("latency_ms") or {}).get("p50"), 1))
        console.print(table)
        if paper:
            console.print(
                "  paper: " + "; ".join(f"{k.removeprefix('paper ')} {v}" for k, v in paper.items())
            )
    console.print(f"{SIG_MARK}X: significantly different from arm X (paired test, Holm-corrected)")


def failures_command(
    run_dir: RunDirArg,
    arm: Annotated[str | None, typer.Option("--arm", help="Only this arm (e.g. hybrid).")] = None,
    worst: Annotated[int, typer.Option("--worst", help="How many queries to list.")] = 10,
    dataset: Annotated[str | None, typer.Option("--dataset", help="Only this dataset.")] = None,
) -> None:
    """The worst queries of a run by nDCG@10, with the relevant documents each arm missed."""
    records = worst_queries(load_records(run_dir), arm=arm, dataset=dataset, worst=worst)
    console = _out()
    for rank, rec in enumerate(records, 1):
        query = rec.get("query") or {}
        metrics = rec.get("metrics") or {}
        relevant = rec.get("relevant") or {}
        first = rec.get("first_relevant_rank")
        console.print(
            Text.assemble(
                (f"{rank:>2}. ", "bold"),
                (f"{rec.get('dataset')} · {rec.get('arm')} · {query.get('id')}", "bold cyan"),
                f"  nDCG@10 {fmt(metrics.get('ndcg_at_10'), 3)}",
                f"  first relevant {first if first is not None else 'none'}",
                f"  relevant {relevant.get('retrieved', 0)}/{relevant.get('total', 0)} retrieved",
            )
        )
        console.print(Text(f"    {query.get('text', '')}", style="italic"))
        missed = rec.get("missed") or []
        if missed:
            table = Table(show_header=True, header_style="dim", box=None, padding=(0, 1), pad_edge=False)
            for col in ("missed doc", "grade", "retrieved by", "title"):
                table.add_column(col, overflow="fold")
            for m in missed:
                table.add_row(
                    str(m.get("id")),
                    str(m.get("grade")),
                    ", ".join(m.get("retrieved_by") or []) or "no arm",
                    str(m.get("title") or ""),
                )
            console.print(table, style="", end="")
            console.print()
    if not records:
        console.print("no records")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
    app.command("failures")(failures_command)
