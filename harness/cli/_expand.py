"""`harness expand`: generate HyDE, query2doc or LameR expansions through an OpenAI-compatible endpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli._common import console, with_connection
from harness.cli._endpoint import ApiKeyEnvOpt, BaseUrlOpt
from harness.expand import (
    AUTO,
    GENERATION_METHODS,
    NONE,
    REASONING_FORMATS,
    ExpandConfig,
    ExpandResult,
    GenerationSettings,
    expand,
)
from indexer import ConnectionSettings, Endpoint, Retry, connect

DatasetOpt = Annotated[str, typer.Option("--dataset", "-d", help="sample, r2med/<Name>, or a folder.")]
MethodOpt = Annotated[str, typer.Option("--method", help=f"{' | '.join(GENERATION_METHODS)}.")]
ModelOpt = Annotated[str, typer.Option("--model", help="The model name the endpoint serves.")]
NameOpt = Annotated[
    str | None,
    typer.Option("--name", help="The <llm> folder, used as --expansion METHOD:NAME (default: from --model)."),
]
PromptOpt = Annotated[
    Path | None,
    typer.Option(
        "--prompt", help="TOML prompt file: system, and user with {query} (LameR: also {passages})."
    ),
]
TemperatureOpt = Annotated[float, typer.Option("--temperature", min=0.0, max=2.0)]
TopPOpt = Annotated[float, typer.Option("--top-p", min=0.0, max=1.0)]
MaxTokensOpt = Annotated[int | None, typer.Option("--max-tokens", min=1)]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Sent to endpoints that honour it.")]
ReasoningOpt = Annotated[
    str,
    typer.Option(
        "--reasoning-format",
        help=f"How to split a reasoning trace off: {AUTO} (by model family), {NONE}, or {', '.join(REASONING_FORMATS)}.",
    ),
]
SplitOpt = Annotated[str | None, typer.Option("--split", help="Query split (BEIR layouts; default test).")]
RevisionOpt = Annotated[
    str | None, typer.Option("--revision", help="Hub revision for r2med datasets (default: pinned).")
]
OutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Folder for <method>/<llm>/ (default: the dataset's own)."),
]
CacheDirOpt = Annotated[
    Path | None, typer.Option("--cache-dir", help="Generation cache (default <cache>/generations).")
]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, max=256, help="Requests in flight.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.001, help="Seconds per request.")]
RetriesOpt = Annotated[
    int, typer.Option("--max-retries", min=0, max=100, help="Retries per query (429, 5xx, timeouts).")
]
BackoffOpt = Annotated[
    float,
    typer.Option(
        "--backoff", min=0.0, max=60.0, help="First retry's wait in seconds (doubles; Retry-After wins)."
    ),
]
DepthOpt = Annotated[
    int, typer.Option("--first-stage-depth", help="LameR: passages from the BM25 first stage.")
]
Bm25Opt = Annotated[str, typer.Option("--bm25", help="LameR's first stage BM25: es or r2med.")]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress")]


@with_connection
def expand_command(
    dataset: DatasetOpt,
    method: MethodOpt,
    model: ModelOpt,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    name: NameOpt = None,
    prompt: PromptOpt = None,
    temperature: TemperatureOpt = 0.7,
    top_p: TopPOpt = 1.0,
    max_tokens: MaxTokensOpt = None,
    seed: SeedOpt = None,
    reasoning_format: ReasoningOpt = AUTO,
    split: SplitOpt = None,
    revision: RevisionOpt = None,
    output: OutputOpt = None,
    cache_dir: CacheDirOpt = None,
    concurrency: ConcurrencyOpt = 4,
    timeout: TimeoutOpt = 120.0,
    max_retries: RetriesOpt = 8,
    backoff: BackoffOpt = 1.0,
    first_stage_depth: DepthOpt = 10,
    bm25: Bm25Opt = "es",
    progress: ProgressOpt = True,
    *,
    conn: ConnectionSettings,
) -> None:
    """Generate an expansion for every query through an OpenAI-compatible chat endpoint (R2MED layout)."""
    retry = Retry(max_retries=max_retries, initial_backoff_s=backoff, max_backoff_s=60.0)
    config = ExpandConfig(
        dataset=dataset,
        method=method.strip().lower(),
        model=model,
        endpoint=Endpoint.resolve(
            base_url, api_key_env, timeout_s=timeout, concurrency=concurrency, retry=retry
        ),
        name=name,
        prompt_file=prompt,
        settings=GenerationSettings(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
        reasoning_format=reasoning_format,
        split=split,
        revision=revision,
        output=output,
        cache_dir=cache_dir,
        first_stage_depth=first_stage_depth,
        bm25=bm25,
        progress=progress,
    )
    backend = connect(conn) if config.needs_engine else None
    try:
        print_result(expand(config, client=backend, console=console), config)
    finally:
        if backend is not None:
            backend.close()


def print_result(result: ExpandResult, config: ExpandConfig) -> None:
    s, t = result.stats, result.file_tokens
    console.print(
        f"wrote {result.queries} expansions ({result.traces} with a reasoning trace) to {result.path}\n"
        f"calls made: {s.calls} (answers from the cache: {s.cache_hits}, retries: {s.retries}) in {s.seconds:.1f}s\n"
        f"tokens this run: in {s.prompt_tokens:,}, out {s.completion_tokens:,} (reasoning {s.reasoning_tokens:,}); "
        f"tokens of the whole set: in {t['prompt_tokens']:,}, out {t['completion_tokens']:,} "
        f"(reasoning {t['reasoning_tokens']:,})",
        highlight=False,
        soft_wrap=True,
    )
    if result.validated:
        console.print(
            f"validated with the dataset; use it with: harness run ... --dataset {config.dataset} "
            f"--expansion {config.method}:{config.llm}",
            highlight=False,
            soft_wrap=True,
        )
    else:
        console.print(
            f"written outside the dataset ({result.path.parent.parent.parent}): copy {config.method}/{config.llm}/ "
            "into the dataset folder to use it with --expansion",
            highlight=False,
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    app.command("expand")(expand_command)
