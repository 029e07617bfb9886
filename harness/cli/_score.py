"""`harness score RUN.trec... --qrels FILE`: TREC run files from anywhere scored as the harness scores its own.

The run files and ``--qrels`` are what is scored; the other flags are experiment keys (``stats.measures``, ``eval.relevance_level``,
``eval.complete``, ``eval.judged_only``), and ``--set`` and ``--experiment FILE`` set any of them, through
the experiment builder ``harness run`` uses; the scoring is :func:`harness._score.score_files`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from base import write_json_atomic
from harness._score import Scores, measure_name, trec_eval_lines
from harness.cli._common import console
from harness.cli._options import SetOpt, output_option
from harness.experiment import experiment
from harness.inspect import print_table, significance_table

#: the key each flag of ``harness score`` sets (the command's parameter -> (flag, key))
FLAGS: dict[str, tuple[str, str]] = {
    "measure": ("--measure", "stats.measures"),
    "level": ("--relevance-level", "eval.relevance_level"),
    "complete": ("--complete", "eval.complete"),
    "judged_only": ("--judged-only", "eval.judged_only"),
}
#: ``score`` reads the experiment's eval and stats tables; the builder wants arms, so it is given the
#: lexical mode's, which ``score`` never runs
_NO_RUN = {"mode": ("lexical", "harness score")}


def _flags(given: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    out: dict[str, tuple[Any, str]] = dict(_NO_RUN)
    for param, (flag, key) in FLAGS.items():
        value = given.get(param)
        if value is None or (value is False and param == "judged_only"):
            continue
        if isinstance(value, list):
            out[key] = (",".join(value), " ".join(f"{flag} {v}" for v in value))
        elif isinstance(value, bool):
            out[key] = (value, flag if value else f"--no-{flag.removeprefix('--')}")
        else:
            out[key] = (str(value) if isinstance(value, Path) else value, f"{flag} {value}")
    return out


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


def score(
    runs: Annotated[list[Path], typer.Argument(help="TREC run files (QUERY_ID Q0 DOC_ID RANK SCORE TAG).")],
    qrels: Annotated[
        Path | None, typer.Option("--qrels", help="Their judgments (TREC qrels, TSV/CSV, Quepid, RRE).")
    ] = None,
    measure: Annotated[
        list[str] | None,
        typer.Option(
            "--measure",
            "-m",
            help="Measures: trec_eval's (ndcg_cut_10, P_10, map), ir_measures' (nDCG@10, P(rel=2)@10) or ours; "
            "repeatable, commas allowed.",
        ),
    ] = None,
    level: Annotated[
        int | None,
        typer.Option("--relevance-level", "-l", help="Lowest grade binary measures count (trec_eval -l; 1)."),
    ] = None,
    complete: Annotated[
        bool | None,
        typer.Option(
            "--complete/--no-complete",
            "-c",
            help="Judged queries without results count as 0 (trec_eval -c; on).",
        ),
    ] = None,
    judged_only: Annotated[
        bool, typer.Option("--judged-only", "-J", help="nDCG over judged documents only (trec_eval -J).")
    ] = False,
    per_query: Annotated[
        bool, typer.Option("--per-query", "-q", help="Every query's values too (trec_eval -q).")
    ] = False,
    file: Annotated[
        Path | None, typer.Option("--experiment", help="Experiment file (TOML): its [eval] and [stats] keys.")
    ] = None,
    settings: SetOpt = None,
    output: Annotated[Path | None, output_option("Also write the scores here (JSON).")] = None,
) -> None:
    """Score TREC run files against judgments as trec_eval does (its measure names, -l, -c, -J, -q), with
    each mean's 95% interval and, for several runs, paired tests of each against the first."""
    from harness._score import score_files

    given = {
        "measure": measure,
        "level": level,
        "complete": complete,
        "judged_only": judged_only,
    }
    names = {key: flag for _, (flag, key) in FLAGS.items()}
    exp = experiment(file, flags=_flags(given), settings=settings or (), flag_names=names)
    if qrels is None:
        raise typer.BadParameter(
            "expected the judgments to score with (--qrels FILE), found none", param_hint="--qrels"
        )
    scores = score_files(runs, qrels, exp)
    _print(scores, per_query)
    if output is not None:
        write_json_atomic(
            output,
            {
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
            },
        )


def register(app: typer.Typer) -> None:
    app.command("score")(score)
