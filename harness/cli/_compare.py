"""`harness compare RUN_DIR...`: paired tests across finished runs, and how much their rankings agree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from base import write_json_atomic
from harness._compare import compare_runs, overlap_runs
from harness.cli._common import console
from harness.cli._options import Deprecated, output_option, with_deprecated
from harness.eval import OVERLAP_K, RBO_P, STAT_TESTS
from harness.inspect import overlap_table, print_table, significance_table


@with_deprecated(Deprecated("--json", "output", kind=Path))
def compare(
    run_dirs: Annotated[list[Path], typer.Argument(help="Two or more run directories.")],
    test: Annotated[str, typer.Option("--test", help=f"{', '.join(STAT_TESTS)}.")] = "randomization",
    measure: Annotated[str, typer.Option("--measure")] = "ndcg@10",
    alpha: Annotated[float, typer.Option("--alpha")] = 0.05,
    output: Annotated[Path | None, output_option("Also write the comparisons here (JSON).")] = None,
    k: Annotated[
        int, typer.Option("--overlap-k", help="Depth of overlap@k (Jaccard of the top k).")
    ] = OVERLAP_K,
    p: Annotated[float, typer.Option("--rbo-p", help="Persistence of RBO (RBO_ext).")] = RBO_P,
) -> None:
    """Paired significance tests across runs (Holm-corrected over arms × datasets), then how much the
    same arms' rankings agree without judgments (overlap@k and RBO, from the runs' TREC files)."""
    comparisons = compare_runs(run_dirs, test=test, measure=measure, alpha=alpha)
    title = f"{measure}: paired {test} tests, Holm-corrected over {len(comparisons)} comparisons"
    print_table(significance_table("compare", comparisons, title=title, with_dataset=True), console)
    title = f"agreement without judgments: overlap@{k} and RBO (p={p:g}) of the same arms"
    print_table(
        overlap_table("compare", overlap_runs(run_dirs, k=k, p=p), title=title, with_dataset=True), console
    )
    if output is not None:
        write_json_atomic(output, [c.to_dict() for c in comparisons])


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
