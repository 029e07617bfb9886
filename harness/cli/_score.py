"""`harness score RUN.trec... --qrels FILE`: TREC run files from anywhere scored as the harness scores its own.

The run files and ``--qrels`` are what is scored; the other flags are views of keys (``stats.measures``,
``eval.relevance_level``, ``eval.complete``, ``eval.judged_only``), which ``--set`` and ``--experiment FILE``
set alike; the scoring is :func:`harness._score.score_files`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from base import write_json_atomic
from harness._score import Scores, measure_name, trec_eval_lines
from harness.cli._common import console
from harness.cli._options import output_option
from harness.cli._views import Flag, with_keys
from harness.experiment import EvalTable, Settings, StatsTable, View
from harness.inspect import print_table, significance_table

#: what ``harness score`` reads: how runs are scored (``eval.*``) and compared (``stats.*``)
VIEW = View("harness score", tables=("eval", "stats"))
SCORING = "Scoring"
FLAGS: tuple[Flag, ...] = (
    Flag("stats.measures", ("--measure", "-m"), SCORING, metavar="MEASURES"),
    Flag("eval.relevance_level", ("--relevance-level", "-l"), SCORING),
    Flag("eval.complete", ("--complete", "-c"), SCORING),
    Flag("eval.judged_only", ("--judged-only", "-J"), SCORING),
)


def _print(scores: Scores, per_query: bool) -> None:
    console.print(f"scored with {scores.settings}; judgments {scores.qrels}", highlight=False)
    if len(scores.runs) == 1:
        for line in trec_eval_lines(scores.runs[0], scores.measures, per_query):
            typer.echo(line)  # as trec_eval prints it, tabs kept
        return
    names = [measure_name(m) for m in scores.measures]
    width = max(len(r.name) for r in scores.runs)
    console.print("  ".join([f"{'run':<{width}}", *(f"{n:>22}" for n in names)]), highlight=False)
    for r in scores.runs:
        cells = [
            f"{r.means[m.key]:.4f} ({r.ci95[m.key][0]:.3f}-{r.ci95[m.key][1]:.3f})" for m in scores.measures
        ]
        console.print("  ".join([f"{r.name:<{width}}", *(f"{c:>22}" for c in cells)]), highlight=False)
    if per_query:
        for r in scores.runs:
            for line in trec_eval_lines(r, scores.measures, True):
                typer.echo(f"{r.name}\t{line}")
    title = f"{scores.measures[0]}: paired tests of each run against {scores.runs[0].name}, Holm-corrected"
    print_table(significance_table("score", list(scores.comparisons), title=title), console)


@with_keys(VIEW, FLAGS, panel="Output")
def score(
    runs: Annotated[list[Path], typer.Argument(help="TREC run files (QUERY_ID Q0 DOC_ID RANK SCORE TAG).")],
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="Their judgments (TREC qrels, TSV/CSV, Quepid, RRE).")
    ] = None,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Every query's values too (trec_eval -q).")
    ] = False,
    output: Annotated[Path | None, output_option("Also write the scores here (JSON).")] = None,
    *,
    keys: Settings,
) -> None:
    """Score TREC run files against judgments as trec_eval does (its measure names, -l, -c, -J, -q), with
    each mean's 95% interval and, for several runs, paired tests of each against the first."""
    from harness._score import score_files

    if qrels is None:
        raise typer.BadParameter(
            "expected the judgments to score with (--qrels FILE), found none", param_hint="--qrels"
        )
    scores = score_files(runs, qrels, keys.table(EvalTable), keys.table(StatsTable))
    _print(scores, per_query)
    if output is not None:
        write_json_atomic(output, _as_json(scores))


def _as_json(scores: Scores) -> dict[str, object]:
    return {
        "settings": scores.settings,
        "qrels": str(scores.qrels),
        "runs": [
            {
                "name": r.name,
                "path": str(r.path),
                "metrics": r.means,
                "ci95": r.ci95,
                "queries": len(r.evaluation.qids),
            }
            for r in scores.runs
        ],
        "comparisons": [c.to_dict() for c in scores.comparisons],
    }


def register(app: typer.Typer) -> None:
    app.command("score")(score)
