"""`harness expand`: generate HyDE, query2doc or LameR expansions through an OpenAI-compatible endpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness._reasoning import AUTO, NONE, REASONING_FORMATS
from harness.cli._common import console, with_connection
from harness.cli._endpoint import ApiKeyEnvOpt, BaseUrlOpt
from harness.expand import GENERATION_METHODS, ExpandConfig, ExpandResult, GenerationSettings, expand
from indexer import ConnectionSettings, Endpoint, Retry, connect


@with_connection
def expand_command(
    dataset: Annotated[str, typer.Option("--dataset", "-d", help="sample, r2med/<Name>, or a folder.")],
    method: Annotated[str, typer.Option("--method", help=f"{' | '.join(GENERATION_METHODS)}.")],
    model: Annotated[str, typer.Option("--model", help="The model name the endpoint serves.")],
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name", help="The <llm> folder, used as --expansion METHOD:NAME (default: from --model)."
        ),
    ] = None,
    prompt: Annotated[
        Path | None,
        typer.Option(
            "--prompt", help="TOML prompt file: system, and user with {query} (LameR: also {passages})."
        ),
    ] = None,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, max=2.0)] = 0.7,
    top_p: Annotated[float, typer.Option("--top-p", min=0.0, max=1.0)] = 1.0,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=1)] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Sent to endpoints that honour it.")] = None,
    reasoning_format: Annotated[
        str,
        typer.Option(
            "--reasoning-format",
            help=f"How to split a reasoning trace off: {AUTO} (by model family), {NONE}, or {', '.join(REASONING_FORMATS)}.",
        ),
    ] = AUTO,
    split: Annotated[
        str | None, typer.Option("--split", help="Query split (BEIR layouts; default test).")
    ] = None,
    revision: Annotated[
        str | None, typer.Option("--revision", help="Hub revision for r2med datasets (default: pinned).")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Folder for <method>/<llm>/ (default: the dataset's own)."),
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Generation cache (default <cache>/generations).")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=256, help="Requests in flight.")
    ] = 4,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request.")] = 120.0,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, max=100, help="Retries per query (429, 5xx, timeouts).")
    ] = 8,
    first_stage_depth: Annotated[
        int, typer.Option("--first-stage-depth", help="LameR: passages from the BM25 first stage.")
    ] = 10,
    bm25: Annotated[str, typer.Option("--bm25", help="LameR's first stage BM25: es or r2med.")] = "es",
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    *,
    conn: ConnectionSettings,
) -> None:
    """Generate an expansion for every query through an OpenAI-compatible chat endpoint (R2MED layout)."""
    config = ExpandConfig(
        dataset=dataset,
        method=method.strip().lower(),
        model=model,
        endpoint=Endpoint.resolve(
            base_url,
            api_key_env,
            timeout_s=timeout,
            concurrency=concurrency,
            retry=Retry(max_retries=max_retries, initial_backoff_s=1.0, max_backoff_s=60.0),
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
    client = connect(conn) if config.needs_engine else None
    print_result(expand(config, client=client, console=console), config)


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
