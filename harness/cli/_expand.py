"""`harness expand`: generate HyDE, query2doc or LameR expansions through an OpenAI-compatible endpoint."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from base import ConfigError
from harness.cli._common import CONNECTION, CONNECTION_ALIASES, URL, console, spelled
from harness.cli._options import Deprecated, output_option, with_deprecated
from harness.cli._views import Flag, with_keys
from harness.expand import ExpandConfig, ExpandKeys, ExpandResult, expand
from harness.experiment import DataTable, OutputTable, Settings, View
from indexer import connect

#: what ``harness expand`` reads: its own keys, the dataset's split and revision, and (LameR) the cluster
VIEW = View(
    "harness expand", tables=("expand", *CONNECTION), keys=("data.split", "data.revision", "output.quiet")
)
DATA, LLM, GEN, OUT, FIRST = "Data", "LLM", "Generation", "Output", "LameR's first stage"
REQUESTS = "Requests (advanced)"
FLAGS: tuple[Flag, ...] = (
    Flag("data.split", ("--split",), DATA),
    Flag("data.revision", ("--revision",), DATA),
    Flag("expand.method", ("--method",), LLM),
    Flag("expand.llm", ("--llm",), LLM, metavar="MODEL"),
    Flag("expand.llm_url", ("--llm-url",), LLM, metavar="URL"),
    Flag("expand.llm_key_env", ("--llm-key-env",), LLM, metavar="VAR"),
    Flag("expand.prompt", ("--prompt",), LLM, metavar="FILE"),
    Flag("expand.reasoning_format", ("--reasoning-format",), LLM),
    Flag("expand.temperature", ("--temperature",), GEN),
    Flag("expand.top_p", ("--top-p",), GEN),
    Flag("expand.max_tokens", ("--max-tokens",), GEN),
    Flag("expand.seed", ("--seed",), GEN),
    Flag("expand.name", ("--name",), OUT),
    Flag("output.quiet", ("--quiet", "-q"), OUT),
    Flag("expand.concurrency", ("--concurrency",), REQUESTS),
    Flag("expand.timeout", ("--timeout",), REQUESTS),
    Flag("expand.max_retries", ("--max-retries",), REQUESTS),
    Flag("expand.backoff", ("--backoff",), REQUESTS),
    Flag("expand.cache_dir", ("--cache-dir",), REQUESTS, metavar="DIR"),
    Flag("expand.first_stage_depth", ("--first-stage-depth",), FIRST),
    Flag("expand.bm25", ("--bm25",), FIRST),
    URL,
)
DatasetOpt = Annotated[
    str | None,
    typer.Option("--dataset", "-d", help="sample, r2med/<Name>, or a folder.", rich_help_panel=DATA),
]
OutputOpt = Annotated[Path | None, output_option("Folder for <method>/<llm>/ (default: the dataset's own).")]
#: the names `harness expand` took before (hidden; one release)
OLD_NAMES = (
    Deprecated("--model", "llm"),
    Deprecated("--base-url", "llm_url"),
    Deprecated("--api-key-env", "llm_key_env"),
    Deprecated("--no-progress", "quiet", flag=True),
    Deprecated("--progress", "quiet", flag=True, value=False, new="leaving it out (progress is the default)"),
    *CONNECTION_ALIASES,
)


@with_deprecated(*OLD_NAMES)
@with_keys(VIEW, FLAGS, panel=OUT)
def expand_command(dataset: DatasetOpt = None, output: OutputOpt = None, *, keys: Settings) -> None:
    """Generate an expansion for every query through an OpenAI-compatible chat endpoint (R2MED layout)."""
    if dataset is None:
        raise ConfigError("--dataset: expected the dataset whose queries to expand, found none")
    data, quiet = keys.table(DataTable), keys.table(OutputTable).quiet
    config = keys.table(ExpandKeys).config(dataset, data.split, data.revision, output, not quiet)
    config = dataclasses.replace(config, endpoint=spelled(config.endpoint, keys.origins, "expand"))
    backend = connect(keys.connection()) if config.needs_engine else None
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
