"""``harness gate RUN_DIR``: rules over a run (and a baseline); exit 0 all hold, 1 one fails, 2 cannot evaluate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from base import HarnessError, write_text_atomic
from harness.cli._common import console
from harness.eval import STAT_TESTS
from harness.gate import (
    GateConfig,
    GateError,
    GateOptions,
    evaluate_gate,
    gate_table,
    junit_error,
    junit_xml,
    markdown_error,
    markdown_summary,
)
from harness.inspect import print_table

_GATE = GateOptions()
RULES_HELP = (
    "A rule (repeatable): hybrid:ndcg@10>=0.65 | vector:p99<=50ms | hybrid:ndcg@10 drop<=0.02 "
    "(against --baseline; drop<=3% for a relative margin) | sample/hybrid:... for one dataset."
)


def _append(path: Path, text: str) -> None:
    """Append (a CI step summary file collects what every command of the step writes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def _write_error(junit: Path | None, summary: Path | None, message: str) -> None:
    if junit is not None:
        write_text_atomic(junit, junit_error(message))
    if summary is not None:
        _append(summary, markdown_error(message))


def gate_command(
    run_dir: Annotated[
        Path, typer.Argument(help="Run directory to gate (holds results.json).", show_default=False)
    ],
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Run directory to compare against.")
    ] = None,
    require: Annotated[list[str] | None, typer.Option("--require", help=RULES_HELP)] = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="TOML file with a \\[gate] table.")] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")] = None,
    summary: Annotated[
        Path | None,
        typer.Option("--summary", help="Append a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY)."),
    ] = None,
    alpha: Annotated[
        float | None,
        typer.Option("--alpha", help=f"Significance level of regressions (default {_GATE.alpha})."),
    ] = None,
    test: Annotated[
        str | None,
        typer.Option("--test", help=f"Paired test: {', '.join(STAT_TESTS)} (default {_GATE.test})."),
    ] = None,
    allow_unmeasured_judge: Annotated[
        bool,
        typer.Option(
            "--allow-unmeasured-judge",
            help="Gate on figures scored with an LLM judge's labels whose agreement with people was never measured.",
        ),
    ] = False,
) -> None:
    """Check rules on a run: thresholds, latency ceilings, regressions against a baseline (significance-aware)."""
    try:
        config = (GateConfig.from_file(rules) if rules else GateConfig()).with_flags(
            require or [], baseline, alpha, test, allow_unmeasured_judge
        )
        report = evaluate_gate(config, run_dir)
    except HarnessError as exc:
        error = exc if isinstance(exc, GateError) else GateError("cannot evaluate the gate")
        if error is not exc:
            error.__cause__ = exc  # an exit of 2, and the message walks down to the cause
        _write_error(junit, summary, str(error))
        raise error from error.__cause__
    print_table(gate_table(report), console)
    if junit is not None:
        write_text_atomic(junit, junit_xml(report))
    if summary is not None:
        _append(summary, markdown_summary(report))
    raise typer.Exit(report.exit_code)


def register(app: typer.Typer) -> None:
    app.command("gate")(gate_command)
