"""`harness run MODE | --experiment FILE`: flags in, typed experiment, tables out.

``harness run`` shows the options most runs need, in panels; every other key of the experiment is set
with ``--set KEY=VALUE`` (or in the experiment file), and the flags it had before are hidden aliases
for one release (:data:`harness.cli._experiment.DEPRECATED`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli._common import (
    ApiKeyOpt,
    CaCertOpt,
    ConfigOpt,
    InsecureOpt,
    PasswordOpt,
    UrlOpt,
    UserOpt,
    console,
)
from harness.cli._experiment import DEPRECATED, experiment_of
from harness.cli._options import (
    EmbedModelOpt,
    QuietOpt,
    SetOpt,
    in_panel,
    output_option,
    with_deprecated,
)
from harness.experiment import EmbeddingTable, OutputTable
from harness.inspect import print_results
from harness.run import run
from harness.strategies import MODES

#: the help panels (``Options`` is typer's own: --help joins the output options there)
DATA, ARMS, OUT, CONN = "What to evaluate", "Arms and phases", "Options", "Connection"


def _opt(*names: str, help: str, panel: str, metavar: str | None = None) -> typer.models.OptionInfo:
    return typer.Option(*names, help=help, rich_help_panel=panel, show_default=False, metavar=metavar)


#: (shown in the usage line and the command's text: an arguments panel would take three more lines)
ModeArg = Annotated[
    str | None, typer.Argument(help=f"{'|'.join(MODES)}.", show_default=False, metavar="MODE", hidden=True)
]
DatasetOpt = Annotated[
    list[str] | None,
    _opt("--dataset", "-d", help="r2med (default), sample, a folder.", panel=DATA, metavar="NAME"),
]
ExperimentOpt = Annotated[
    Path | None,
    _opt("--experiment", help="Experiment file (TOML): arms and keys.", panel=DATA, metavar="FILE"),
]
QueriesOpt = Annotated[
    Path | None, _opt("--queries", help="Your queries (JSONL or TSV).", panel=DATA, metavar="FILE")
]
QrelsOpt = Annotated[
    Path | None, _opt("--qrels", help="Their judgments (TREC, CSV, ...).", panel=DATA, metavar="FILE")
]
SplitOpt = Annotated[
    str | None, _opt("--split", help="Evaluation split (default test).", panel=DATA, metavar="NAME")
]
ExpansionOpt = Annotated[
    str | None,
    _opt("--expansion", help="hyde|query2doc|lamer|search-o1|search-r1.", panel=ARMS, metavar="METHOD"),
]
RerankOpt = Annotated[
    str | None,
    _opt("--rerank", help="Rerank top-k: \\[cross:|bi:]MODEL\\[@DEPTH].", panel=ARMS, metavar="MODEL"),
]
FusionOpt = Annotated[
    str | None, _opt("--fusion", help="rrf[:k=60] | wsum[:weights=a/b] | ...", panel=ARMS, metavar="SPEC")
]
TuneOnOpt = Annotated[
    str | None, _opt("--tune-on", help="Tune held out: train | kfold[:K].", panel=ARMS, metavar="HOW")
]
LoadOpt = Annotated[bool, _opt("--load", help="Then a load phase (Rally's measures).", panel=ARMS)]
AnnSweepOpt = Annotated[
    bool, _opt("--ann-sweep", help="Then sweep ANN index types x candidates.", panel=ARMS)
]
OutputOpt = Annotated[Path | None, in_panel(output_option("Run directory (default runs/MODE-HASH)."), OUT)]
RecordsOpt = Annotated[
    str | None,
    _opt(
        "--records",
        help=f"{','.join(OutputTable().records)} (default) | jsonl | none.",
        panel=OUT,
        metavar="SINKS",
    ),
]
WideOpt = Annotated[bool, _opt("--wide", help="Every table in full.", panel=OUT)]


_MODEL = f"Embedding model (default {EmbeddingTable().model})."
_SET = "Any experiment key, e.g. search.batch_size=64."
_CONFIG = "TOML \\[connection] file (env R2MED_HARNESS_CONFIG)."


@with_deprecated(*DEPRECATED)
def run_command(
    mode: ModeArg = None,
    dataset: DatasetOpt = None,
    experiment: ExperimentOpt = None,
    queries: QueriesOpt = None,
    qrels: QrelsOpt = None,
    split: SplitOpt = None,
    embed_model: Annotated[str | None, in_panel(EmbedModelOpt, ARMS, help=_MODEL)] = None,
    expansion: ExpansionOpt = None,
    rerank: RerankOpt = None,
    fusion: FusionOpt = None,
    tune_on: TuneOnOpt = None,
    load: LoadOpt = False,
    ann_sweep: AnnSweepOpt = False,
    output: OutputOpt = None,
    records: RecordsOpt = None,
    quiet: Annotated[bool, in_panel(QuietOpt, OUT)] = False,
    wide: WideOpt = False,
    settings: Annotated[list[str] | None, in_panel(SetOpt, OUT, help=_SET)] = None,
    url: Annotated[
        str | None, in_panel(UrlOpt, CONN, help="Elasticsearch or OpenSearch URL (env ES_URL).")
    ] = None,
    username: Annotated[str | None, in_panel(UserOpt, CONN)] = None,
    password: Annotated[
        str | None, in_panel(PasswordOpt, CONN, help="Basic-auth password (env ES_PASSWORD).")
    ] = None,
    api_key: Annotated[str | None, in_panel(ApiKeyOpt, CONN)] = None,
    ca_cert: Annotated[Path | None, in_panel(CaCertOpt, CONN)] = None,
    insecure: Annotated[
        bool, in_panel(InsecureOpt, CONN, help="Do not verify TLS (env ES_VERIFY_CERTS).")
    ] = False,
    config: Annotated[Path | None, in_panel(ConfigOpt, CONN, help=_CONFIG)] = None,
) -> None:
    """Run a MODE (lexical, vector, hybrid) or --experiment FILE, and score it."""
    given = dict(locals())
    exp = experiment_of(given, given.pop("experiment"), given.pop("settings"))
    run_dir, results = run(exp, console=console)
    print_results(results, console, wide=exp.output.wide, run_dir=run_dir)
    console.print(
        f"\nrun directory: {run_dir}  (results.json, report.md, per_query.jsonl, runs/, records.jsonl)"
    )


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
