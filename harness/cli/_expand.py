"""`harness expand`: generate HyDE, query2doc or LameR expansions through an OpenAI-compatible endpoint."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from base import Endpoint
from harness.cli._common import CONNECTION_NAMES, console, with_connection
from harness.cli._options import (
    Deprecated,
    LlmKeyEnvOpt,
    LlmOpt,
    LlmUrlOpt,
    QuietOpt,
    RevisionOpt,
    default_of,
    given,
    output_option,
    retries_option,
    with_deprecated,
    with_panels,
)
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
from indexer import ConnectionSettings, connect

_SETTINGS = GenerationSettings()
_ENDPOINT = Endpoint()
_RETRY = _ENDPOINT.retry

DatasetOpt = Annotated[str, typer.Option("--dataset", "-d", help="sample, r2med/<Name>, or a folder.")]
MethodOpt = Annotated[str, typer.Option("--method", help=f"{' | '.join(GENERATION_METHODS)}.")]
NameOpt = Annotated[
    str | None,
    typer.Option("--name", help="The <llm> folder, used as --expansion METHOD:NAME (default: from --llm)."),
]
PromptOpt = Annotated[
    Path | None,
    typer.Option(
        "--prompt", help="TOML prompt file: system, and user with {query} (LameR: also {passages})."
    ),
]
TemperatureOpt = Annotated[
    float | None,
    typer.Option(
        "--temperature", min=0.0, max=2.0, help=f"Sampling temperature (default {_SETTINGS.temperature})."
    ),
]
TopPOpt = Annotated[
    float | None,
    typer.Option("--top-p", min=0.0, max=1.0, help=f"Nucleus sampling mass (default {_SETTINGS.top_p})."),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option("--max-tokens", min=1, help="Longest answer in tokens (default: the endpoint's)."),
]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="Sent to endpoints that honour it.")]
ReasoningOpt = Annotated[
    str | None,
    typer.Option(
        "--reasoning-format",
        help=f"How to split a reasoning trace off: {AUTO} (by model family; the default), {NONE}, or "
        f"{', '.join(REASONING_FORMATS)}.",
    ),
]
SplitOpt = Annotated[str | None, typer.Option("--split", help="Query split (BEIR layouts; default test).")]
OutputOpt = Annotated[Path | None, output_option("Folder for <method>/<llm>/ (default: the dataset's own).")]
CacheDirOpt = Annotated[
    Path | None, typer.Option("--cache-dir", help="Generation cache (default <cache>/generations).")
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--concurrency", min=1, max=256, help=f"Requests in flight (default {_ENDPOINT.concurrency})."
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=0.001, help=f"Seconds per request (default {_ENDPOINT.timeout_s:g})."),
]
ExpandRetriesOpt = Annotated[int | None, retries_option("query (429, 5xx, timeouts)", _RETRY.max_retries)]
BackoffOpt = Annotated[
    float | None,
    typer.Option(
        "--backoff",
        min=0.0,
        max=60.0,
        help=f"First retry's wait in seconds (doubles; Retry-After wins; default {_RETRY.initial_backoff_s:g}).",
    ),
]
DepthOpt = Annotated[
    int | None,
    typer.Option(
        "--first-stage-depth",
        help=f"LameR: passages from the BM25 first stage (default {default_of(ExpandConfig, 'first_stage_depth')}).",
    ),
]
Bm25Opt = Annotated[
    str | None,
    typer.Option(
        "--bm25", help=f"LameR's first stage BM25: es or r2med (default {default_of(ExpandConfig, 'bm25')})."
    ),
]

PANELS = {
    "Data": ("dataset", "split", "revision"),
    "LLM": ("method", "llm", "llm_url", "llm_key_env", "prompt", "reasoning_format"),
    "Generation": ("temperature", "top_p", "max_tokens", "seed"),
    "Output": ("output", "name", "quiet"),
    "Requests (advanced)": ("concurrency", "timeout", "max_retries", "backoff", "cache_dir"),
    "LameR's first stage": ("first_stage_depth", "bm25", *CONNECTION_NAMES),
}
#: the names `harness expand` took before one name per concept (hidden; one release)
OLD_NAMES = (
    Deprecated("--model", "llm"),
    Deprecated("--base-url", "llm_url"),
    Deprecated("--api-key-env", "llm_key_env"),
    Deprecated("--no-progress", "quiet", flag=True),
    Deprecated("--progress", "quiet", flag=True, value=False, new="leaving it out (progress is the default)"),
)


@with_panels(PANELS)
@with_connection
@with_deprecated(*OLD_NAMES)
def expand_command(
    dataset: DatasetOpt,
    method: MethodOpt,
    split: SplitOpt = None,
    revision: RevisionOpt = None,
    llm: LlmOpt = None,
    llm_url: LlmUrlOpt = None,
    llm_key_env: LlmKeyEnvOpt = None,
    prompt: PromptOpt = None,
    reasoning_format: ReasoningOpt = None,
    temperature: TemperatureOpt = None,
    top_p: TopPOpt = None,
    max_tokens: MaxTokensOpt = None,
    seed: SeedOpt = None,
    output: OutputOpt = None,
    name: NameOpt = None,
    quiet: QuietOpt = False,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: ExpandRetriesOpt = None,
    backoff: BackoffOpt = None,
    cache_dir: CacheDirOpt = None,
    first_stage_depth: DepthOpt = None,
    bm25: Bm25Opt = None,
    *,
    conn: ConnectionSettings,
) -> None:
    """Generate an expansion for every query through an OpenAI-compatible chat endpoint (R2MED layout)."""
    retry = replace(_RETRY, **given(max_retries=max_retries, initial_backoff_s=backoff))
    endpoint = Endpoint.resolve(
        llm_url,
        llm_key_env,
        retry=retry,
        key_flag="--llm-key-env",
        url_flag="--llm-url",
        **given(timeout_s=timeout, concurrency=concurrency),
    )
    config = ExpandConfig(
        dataset=dataset,
        method=method.strip().lower(),
        model=llm or "",
        endpoint=endpoint,
        name=name,
        prompt_file=prompt,
        settings=GenerationSettings(
            **given(temperature=temperature, top_p=top_p), max_tokens=max_tokens, seed=seed
        ),
        split=split,
        revision=revision,
        output=output,
        cache_dir=cache_dir,
        progress=not quiet,
        **given(reasoning_format=reasoning_format, first_stage_depth=first_stage_depth, bm25=bm25),
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
