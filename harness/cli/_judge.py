"""``harness judge [RUN_DIR | --pairs FILE]``: LLM judges label (query, document) pairs, agreement measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from base import ConfigError
from harness.cli._common import console, with_connection
from harness.cli._options import LlmKeyEnvOpt, LlmUrlOpt, QuietOpt, RetriesOpt, with_panels
from harness.inspect import agreement_tables, print_table
from harness.judgments.judge import (
    BUILTIN_PROMPTS,
    COMBINERS,
    CONTEXT_SOURCES,
    DEFAULT_COMBINE,
    DEFAULT_DEPTH,
    DEFAULT_TEMPLATE,
    ENDPOINT_DEFAULTS,
    HUMAN_UNJUDGED,
    JUDGE_SETTINGS,
    ContextSpec,
    JudgeOptions,
    JudgeResult,
    PairSet,
    judge_and_write,
    pairs_from_file,
    pairs_from_run,
)
from indexer import ConnectionSettings, connect

_CONTEXT = ContextSpec()
RunDirArg = Annotated[
    Path | None,
    typer.Argument(help="Run directory whose arms' top documents are pooled and judged.", show_default=False),
]
LlmsOpt = Annotated[
    list[str] | None,
    typer.Option("--llm", help="The LLM: the model name its endpoint serves. Repeat for several judges."),
]
PairsOpt = Annotated[
    Path | None,
    typer.Option("--pairs", help="Pairs file instead of a run: pool.trec, qrels, pool.csv (with --dataset)."),
]
DatasetOpt = Annotated[
    str | None, typer.Option("--dataset", "-d", help="The dataset (of the run, or of the pairs file).")
]
DepthOpt = Annotated[
    int | None, typer.Option("--depth", min=1, help=f"Top documents of each arm to pool ({DEFAULT_DEPTH}).")
]
ArmsOpt = Annotated[
    list[str] | None, typer.Option("--arms", help="Arms to pool (comma-separated; default all).")
]
UnjudgedOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--unjudged-only", help="Judge only pairs people did not judge (agreement is then unmeasured)."
    ),
]
DataOpt = Annotated[
    Path | None, typer.Option("--data", help="Folder holding the run's dataset, if it moved.")
]
TemplateOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--template",
        help=f"{' | '.join(BUILTIN_PROMPTS)} (packaged, default {DEFAULT_TEMPLATE}) or a template file (TOML, or Mustache "
        "with --scale). Repeat for several judges.",
    ),
]
ScaleOpt = Annotated[
    str | None, typer.Option("--scale", help="Scale of a Mustache template file: graded | binary.")
]
CombineOpt = Annotated[
    str | None,
    typer.Option(
        "--combine", help=f"How several judges' labels combine: {' | '.join(COMBINERS)} ({DEFAULT_COMBINE})."
    ),
]
FieldsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--context-fields",
        help=f"Document fields the judge reads (comma-separated; {','.join(_CONTEXT.fields)}).",
    ),
]
SourceOpt = Annotated[
    str | None,
    typer.Option(
        "--context-source",
        help=f"Where the fields come from: {' | '.join(CONTEXT_SOURCES)} ({_CONTEXT.source}).",
    ),
]
IndexOpt = Annotated[
    str | None, typer.Option("--index", help="Index to read fields from (default: the run's).")
]
DocTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-doc-tokens", help=f"Tokens of each document the judge reads ({_CONTEXT.max_doc_tokens})."
    ),
]
TemperatureOpt = Annotated[
    float | None,
    typer.Option(
        "--temperature", min=0.0, max=2.0, help=f"Sampling temperature ({JUDGE_SETTINGS.temperature:g})."
    ),
]
MaxTokensOpt = Annotated[int | None, typer.Option("--max-tokens", min=1, help="Answer tokens per call.")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Sent to endpoints that honour it.")]
HumanOpt = Annotated[
    str | None,
    typer.Option(
        "--human-unjudged",
        help=f"Pooled pairs people did not judge, for agreement: {' | '.join(HUMAN_UNJUDGED)} (auto: 0 when the "
        "judgments list only relevant documents, else left out).",
    ),
]
CacheDirOpt = Annotated[
    Path | None, typer.Option("--cache-dir", help="Answer cache (default <cache>/judgments).")
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--concurrency", min=1, max=256, help=f"Requests in flight ({ENDPOINT_DEFAULTS.concurrency})."
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=0.001, help=f"Seconds per request ({ENDPOINT_DEFAULTS.timeout_s:g})."),
]
AgreementFromOpt = Annotated[
    Path | None,
    typer.Option(
        "--agreement-from",
        help="The same judge's judgments.qrels measured elsewhere: its agreement stands for these pairs "
        "(when people judged none of them).",
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Folder for <dataset>/judgments.qrels (default RUN_DIR/judged/<judge>)."
    ),
]


def _names(values: list[str] | None) -> tuple[str, ...]:
    return tuple(n.strip() for v in values or [] for n in v.split(",") if n.strip())


def _pairs(
    run_dir: Path | None, pairs: Path | None, dataset: str | None, pool: dict[str, Any], index: str | None
) -> PairSet:
    if (run_dir is None) == (pairs is None):
        raise ConfigError("expected a RUN_DIR to pool, or --pairs FILE with --dataset NAME (one of the two)")
    if pairs is not None:
        if not dataset:
            raise ConfigError("--pairs needs --dataset NAME: the dataset its query ids belong to")
        return pairs_from_file(pairs, dataset, index=index or "")
    assert run_dir is not None
    return pairs_from_run(run_dir, dataset=dataset, **{k: v for k, v in pool.items() if v is not None})


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


@with_panels(
    {
        "Pairs": ["run_dir", "pairs", "dataset", "depth", "arms", "unjudged_only", "data"],
        "Judges": ["llm", "template", "scale", "combine", "temperature", "max_tokens", "seed"],
        "Documents": ["context_fields", "context_source", "index", "max_doc_tokens"],
        "Agreement": ["human_unjudged", "agreement_from"],
        "LLM endpoint": ["llm_url", "llm_key_env", "concurrency", "timeout", "max_retries", "cache_dir"],
        "Output": ["output", "quiet"],
    }
)
@with_connection
def judge_command(
    run_dir: RunDirArg = None,
    llm: LlmsOpt = None,
    llm_url: LlmUrlOpt = None,
    llm_key_env: LlmKeyEnvOpt = None,
    pairs: PairsOpt = None,
    dataset: DatasetOpt = None,
    depth: DepthOpt = None,
    arms: ArmsOpt = None,
    unjudged_only: UnjudgedOnlyOpt = False,
    data: DataOpt = None,
    template: TemplateOpt = None,
    scale: ScaleOpt = None,
    combine: CombineOpt = None,
    context_fields: FieldsOpt = None,
    context_source: SourceOpt = None,
    index: IndexOpt = None,
    max_doc_tokens: DocTokensOpt = None,
    temperature: TemperatureOpt = None,
    max_tokens: MaxTokensOpt = None,
    seed: SeedOpt = None,
    human_unjudged: HumanOpt = None,
    agreement_from: AgreementFromOpt = None,
    output: OutputOpt = None,
    cache_dir: CacheDirOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: RetriesOpt = None,
    quiet: QuietOpt = False,
    *,
    conn: ConnectionSettings,
) -> None:
    """Label (query, document) pairs with LLM judges; measure their agreement with human judgments."""
    spec = JudgeOptions(
        llm=_names(llm),
        template=tuple(template or ()),
        scale=scale,
        combine=combine,
        context_source=context_source,
        context_fields=_names(context_fields),
        index=index,
        max_doc_tokens=max_doc_tokens,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        llm_url=llm_url,
        llm_key_env=llm_key_env,
        concurrency=concurrency,
        timeout=timeout,
        max_retries=max_retries,
        human_unjudged=human_unjudged,
        cache_dir=cache_dir,
    ).build()
    pool = {"arms": _names(arms), "depth": depth, "unjudged_only": unjudged_only, "data_path": data}
    chosen = _pairs(run_dir, pairs, dataset, pool, index)
    _announce(chosen)
    backend = connect(conn) if spec.context.source == "index" else None
    try:
        result = judge_and_write(
            spec,
            chosen,
            output,
            agreement_from=agreement_from,
            backend=backend,
            console=console,
            show_progress=not quiet,
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
