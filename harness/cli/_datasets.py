"""``harness datasets list | show | validate``: inspect and check datasets."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from base import DataError
from harness.cli._options import RevisionOpt
from indexer import Dataset, describe, known_datasets, load_dataset, resolve_specs

SplitOpt = Annotated[
    str | None, typer.Option("--split", help="Split to load (BEIR layouts and the sample; default test).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def _out() -> Console:
    return Console(soft_wrap=True, highlight=False)


def _err() -> Console:
    return Console(stderr=True, soft_wrap=True, highlight=False)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def list_command(as_json: JsonOpt = False) -> None:
    """Known datasets, with counts and whether they are on this machine."""
    rows = known_datasets()
    if as_json:
        _print_json(
            [
                {
                    "name": r.name,
                    "description": r.description,
                    "cached": r.cached,
                    "location": r.location,
                    "documents": r.counts.documents if r.counts else None,
                    "queries": r.counts.queries if r.counts else None,
                    "judgments": r.counts.judgments if r.counts else None,
                }
                for r in rows
            ]
        )
        return
    table = Table(title="datasets (counts: default split, by line count)")
    for col in ("name", "cached", "documents", "queries", "judgments", "location"):
        table.add_column(
            col, justify="right" if col in ("documents", "queries", "judgments") else "left", overflow="fold"
        )
    for r in rows:
        c = r.counts
        table.add_row(
            r.name,
            "yes" if r.cached else "no",
            f"{c.documents:,}" if c else "-",
            f"{c.queries:,}" if c else "-",
            f"{c.judgments:,}" if c else "-",
            r.location or "-",
        )
    _out().print(table)


def _show_one(ds: Dataset) -> None:
    d = describe(ds)
    console = _out()
    table = Table(title=f"{d['name']} ({d['format']} layout, split {d['split'] or '-'})", show_header=False)
    table.add_column("field")
    table.add_column("value", overflow="fold")
    jpq = d["judgments_per_query"]
    for key, value in (
        ("source", d["source"]),
        ("splits", ", ".join(d["splits"]) or "-"),
        ("documents", f"{d['documents']:,} ({d['documents_with_title']:,} with title)"),
        ("avg document words", f"{d['avg_document_words']}"),
        ("queries", f"{d['queries']:,} judged ({d['unjudged_queries']:,} without judgments not loaded)"),
        ("avg query words", f"{d['avg_query_words']}"),
        ("judgments", f"{d['judgments']:,}"),
        ("judgments per query", f"mean {jpq['mean']}, min {jpq['min']}, max {jpq['max']}"),
        ("grades", ", ".join(f"{g}: {n:,}" for g, n in d["grades"].items())),
        (
            "expansions",
            ", ".join(f"{e['method']}/{e['llm']} ({e['queries']} queries)" for e in d["expansions"])
            or "none",
        ),
        ("fingerprint", d["fingerprint"]["combined"]),
        ("warnings", str(d["warnings"])),
    ):
        table.add_row(key, Text(str(value)))
    console.print(table)
    for line in d["warning_summary"]:
        console.print(Text(f"  warning: {line}", style="yellow"))


def show_command(
    name: Annotated[str, typer.Argument(help="sample, r2med, r2med/<Name> or a folder.")],
    split: SplitOpt = None,
    revision: RevisionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Counts, average lengths, judgments per query, grades and expansions of a dataset."""
    specs = resolve_specs(name)
    loaded = [load_dataset(spec, split=split, revision=revision) for spec in specs]
    if as_json:
        described = [describe(ds) for ds in loaded]
        _print_json(described[0] if len(described) == 1 else described)
        return
    for ds in loaded:
        _show_one(ds)


def validate_command(
    name: Annotated[str, typer.Argument(help="sample, r2med, r2med/<Name> or a folder.")],
    split: SplitOpt = None,
    revision: RevisionOpt = None,
) -> None:
    """Validate a dataset; exits non-zero when any file has an error (each named file:line)."""
    failed = 0
    out, err = _out(), _err()
    for spec in resolve_specs(name):
        try:
            ds = load_dataset(spec, split=split, revision=revision)
        except DataError as exc:
            failed += 1
            err.print(Text.assemble(("invalid: ", "bold red"), str(exc)))
            continue
        split_note = f", split {ds.split}" if ds.split else ""
        out.print(
            Text.assemble(
                ("valid: ", "bold green"), f"{ds.name} ({ds.format} layout{split_note}) {ds.source}"
            )
        )
        out.print(
            f"  {ds.corpus_size:,} documents, {len(ds.queries):,} queries, {ds.judgments:,} judgments"
            + (
                f" ({ds.unjudged_queries:,} queries without judgments not loaded)"
                if ds.unjudged_queries
                else ""
            )
        )
        if ds.expansions:
            listed = ", ".join(
                f"{m}/{llm} ({len(t)} queries)" for (m, llm), t in sorted(ds.expansions.items())
            )
            out.print(f"  expansions: {listed}")
        else:
            out.print("  expansions: none")
        out.print(f"  fingerprint: {ds.fingerprint.combined}")
        out.print(f"  {len(ds.warnings)} warning(s)")
        for line in ds.warning_summary():
            out.print(Text(f"    {line}", style="yellow"))
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    group = typer.Typer(name="datasets", help="List, inspect and validate datasets.", no_args_is_help=True)
    group.command("list")(list_command)
    group.command("show")(show_command)
    group.command("validate")(validate_command)
    app.add_typer(group, name="datasets")
