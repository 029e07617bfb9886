"""`harness run MODE | --experiment FILE`: flags in, typed experiment, tables out.

``harness run`` shows the options most runs need, in panels, each a view of one experiment key
(:data:`harness.cli._experiment.FLAGS`); every other key is set with ``--set KEY=VALUE`` (or in the experiment
file), and the flags it had before are hidden aliases for one release
(:data:`harness.cli._experiment.DEPRECATED`).
"""

from __future__ import annotations

import typer

from harness.cli._common import console
from harness.cli._experiment import DATA, DEPRECATED, FLAGS, OUT, run_experiment
from harness.cli._options import with_deprecated
from harness.cli._views import with_keys
from harness.experiment import RUN, Experiment
from harness.inspect import print_results
from harness.run import run


@with_deprecated(*DEPRECATED)
@with_keys(
    RUN,
    FLAGS,
    build=run_experiment,
    panel=OUT,
    file_help="Experiment file (TOML): arms and keys.",
    file_panel=DATA,
)
def run_command(*, keys: Experiment) -> None:
    """Run a MODE (lexical, vector, hybrid) or --experiment FILE, and score it."""
    run_dir, results = run(keys, console=console)
    print_results(results, console, wide=keys.output.wide, run_dir=run_dir)
    console.print(
        f"\nrun directory: {run_dir}  (results.json, report.md, per_query.jsonl, runs/, records.jsonl)"
    )


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)


__all__ = ["DATA", "register", "run_command"]
