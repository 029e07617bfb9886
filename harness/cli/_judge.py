"""``harness judge [RUN_DIR | --pairs FILE]``: LLM judges label (query, document) pairs, agreement measured."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from base import ConfigError
from harness.cli._common import CONNECTION, CONNECTION_ALIASES, URL, console, spelled
from harness.cli._options import with_deprecated
from harness.cli._views import Flag, with_keys
from harness.experiment import OutputTable, Settings, View
from harness.inspect import agreement_tables, print_table
from harness.judgments.judge import JudgeResult, PairSet, judge_and_write, pairs_from_file, pairs_from_run
from harness.judgments.sources import Judge, PoolKeys
from indexer import connect

#: ``harness judge``: the judge source of an experiment's ``[judgments]`` (its pool and its judges), as flags
VIEW = View("harness judge", tables=CONNECTION, keys=("output.quiet",), source="judge")
PAIRS, JUDGES, DOCS, AGREE, ENDPOINT, OUT = (
    "Pairs",
    "Judges",
    "Documents",
    "Agreement",
    "LLM endpoint",
    "Output",
)


def _judge(key: str, flag: str, panel: str, metavar: str | None = None) -> Flag:
    return Flag(f"judgments.{key}", (flag,), panel, metavar=metavar, source="judge")


FLAGS: tuple[Flag, ...] = (
    _judge("depth", "--depth", PAIRS),
    _judge("arms", "--arms", PAIRS, "ARMS"),
    _judge("unjudged_only", "--unjudged-only", PAIRS),
    _judge("llm", "--llm", JUDGES, "MODEL"),
    _judge("template", "--template", JUDGES),
    _judge("scale", "--scale", JUDGES),
    _judge("combine", "--combine", JUDGES),
    _judge("temperature", "--temperature", JUDGES),
    _judge("max_tokens", "--max-tokens", JUDGES),
    _judge("seed", "--seed", JUDGES),
    _judge("context_fields", "--context-fields", DOCS, "FIELDS"),
    _judge("context_source", "--context-source", DOCS),
    _judge("index", "--index", DOCS),
    _judge("max_doc_tokens", "--max-doc-tokens", DOCS),
    _judge("human_unjudged", "--human-unjudged", AGREE),
    _judge("llm_url", "--llm-url", ENDPOINT, "URL"),
    _judge("llm_key_env", "--llm-key-env", ENDPOINT, "VAR"),
    _judge("concurrency", "--concurrency", ENDPOINT),
    _judge("timeout", "--timeout", ENDPOINT),
    _judge("max_retries", "--max-retries", ENDPOINT),
    _judge("cache_dir", "--cache-dir", ENDPOINT, "DIR"),
    Flag("output.quiet", ("--quiet", "-q"), OUT),
    URL,
)
RunDirArg = Annotated[
    Path | None,
    typer.Argument(help="Run directory whose arms' top documents are pooled and judged.", show_default=False),
]
PairsOpt = Annotated[
    Path | None,
    typer.Option(
        "--pairs",
        help="Pairs file instead of a run: pool.trec, qrels, pool.csv (with --dataset).",
        rich_help_panel=PAIRS,
    ),
]
DatasetOpt = Annotated[
    str | None,
    typer.Option(
        "--dataset", "-d", help="The dataset (of the run, or of the pairs file).", rich_help_panel=PAIRS
    ),
]
DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="Folder holding the run's dataset, if it moved.", rich_help_panel=PAIRS),
]
AgreementFromOpt = Annotated[
    Path | None,
    typer.Option(
        "--agreement-from",
        help="The same judge's judgments.qrels measured elsewhere: its agreement stands for these pairs "
        "(when people judged none of them).",
        rich_help_panel=AGREE,
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Folder for <dataset>/judgments.qrels (default RUN_DIR/judged/<judge>).",
        rich_help_panel=OUT,
    ),
]


def _pairs(
    run_dir: Path | None,
    pairs: Path | None,
    dataset: str | None,
    pool: PoolKeys,
    index: str | None,
    data: Path | None,
) -> PairSet:
    if (run_dir is None) == (pairs is None):
        raise ConfigError("expected a RUN_DIR to pool, or --pairs FILE with --dataset NAME (one of the two)")
    if pairs is not None:
        if not dataset:
            raise ConfigError("--pairs needs --dataset NAME: the dataset its query ids belong to")
        return pairs_from_file(pairs, dataset, index=index or "")
    assert run_dir is not None
    return pairs_from_run(
        run_dir,
        dataset=dataset,
        arms=pool.arms,
        depth=pool.depth,
        unjudged_only=pool.unjudged_only,
        data_path=data,
    )


def _announce(chosen: PairSet) -> None:
    console.print(
        f"{chosen.dataset.name}: {len(chosen.pairs):,} {chosen.source} ({chosen.judged:,} judged by people, "
        f"{chosen.queries} queries)",
        highlight=False,
        soft_wrap=True,
    )
    if chosen.judge_in_judgments is not None:
        console.print(
            f"note: the run's judgments hold labels of judge {chosen.judge_in_judgments} (a re-scored run): agreement "
            "with people is not measured against them; judge the original run to measure it",
            highlight=False,
            soft_wrap=True,
        )


@with_deprecated(*CONNECTION_ALIASES)
@with_keys(VIEW, FLAGS, panel=OUT)
def judge_command(
    run_dir: RunDirArg = None,
    pairs: PairsOpt = None,
    dataset: DatasetOpt = None,
    data: DataOpt = None,
    agreement_from: AgreementFromOpt = None,
    output: OutputOpt = None,
    *,
    keys: Settings,
) -> None:
    """Label (query, document) pairs with LLM judges; measure their agreement with human judgments."""
    source = keys.source
    assert isinstance(source, Judge)
    spec = dataclasses.replace(source.spec, endpoint=spelled(source.spec.endpoint, keys.origins, "judgments"))
    chosen = _pairs(run_dir, pairs, dataset, source.pool, spec.context.index, data)
    _announce(chosen)
    backend = connect(keys.connection()) if spec.context.source == "index" else None
    try:
        result = judge_and_write(
            spec,
            chosen,
            output,
            agreement_from=agreement_from,
            backend=backend,
            console=console,
            show_progress=not keys.table(OutputTable).quiet,
        )
    finally:
        if backend is not None:
            backend.close()
    print_result(result, run_dir)


def print_result(result: JudgeResult, run_dir: Path | None) -> None:
    prov = result.provenance
    console.print("\n".join(result.lines()), highlight=False, soft_wrap=True)
    for table in agreement_tables(prov.dataset, prov):
        print_table(table, console)
    target = str(run_dir) if run_dir is not None else "RUN_DIR"
    console.print(
        f"next: harness rescore {target} --qrels {result.qrels} --mode fill (beside the human judgments) "
        "or --mode replace (instead of them); then harness gate on the re-scored run",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_command)
