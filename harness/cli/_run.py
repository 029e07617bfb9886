"""`harness run lexical|vector|hybrid` and `harness compare RUN_DIR...`: flags in, typed config, tables out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from harness._compare import compare_runs
from harness._search import SearchOptions
from harness.cli._common import console, with_connection
from harness.cli._endpoint import ApiKeyEnvOpt, BaseUrlOpt
from harness.eval import STAT_TESTS
from harness.inspect import arm_table, print_table, significance_table
from harness.results import RunResults
from harness.run import MAX_DEPTH, RunConfig, run
from harness.strategies import LEXICAL_FIELDS, MODES
from indexer import ANALYSIS_CHAINS, BM25_FIELDS, ConnectionSettings, write_json_atomic


def _opt(*names: str, help: str) -> Any:
    return typer.Option(*names, help=help)


ModeArg = Annotated[str, typer.Argument(help=f"{', '.join(MODES)}.")]
DatasetOpt = Annotated[
    list[str] | None,
    _opt("--dataset", "-d", help="r2med (all eight; default), r2med/<Name>, sample, or a folder."),
]
SplitOpt = Annotated[
    str | None, _opt("--split", help="Evaluation split for BEIR-style datasets (default test).")
]
ModelOpt = Annotated[
    str, _opt("--model", "-m", help="Embedding model name, local folder, or openai:MODEL (an endpoint).")
]
RevisionOpt = Annotated[
    str | None, _opt("--revision", help="Hub revision for r2med datasets (default: the pinned commit).")
]
QueryPromptOpt = Annotated[str | None, _opt("--query-prompt", help="Override the model's query prompt.")]
FusionOpt = Annotated[
    str,
    _opt(
        "--fusion",
        help="rrf[:k=60] | combsum|combmnz|wsum[:norm=min-max|zmuv|max,weights=a/b]; wsum's two weights "
        "also weight hybrid-engine-sum (raw BM25 and kNN scores; default 1/1).",
    ),
]
TuneOnOpt = Annotated[
    str | None,
    _opt("--tune-on", help="Tune fusion and in-engine sum weights on this split (e.g. train)."),
]
AnalysisOpt = Annotated[
    str | None,
    _opt(
        "--analysis",
        help=f"Index analysis chain: {' | '.join(ANALYSIS_CHAINS)} (default: the engine's best).",
    ),
]
ExpansionOpt = Annotated[
    str | None, _opt("--expansion", help="hyde|query2doc|lamer|search-o1|search-r1[:LLM].")
]
RerankOpt = Annotated[
    str | None,
    _opt("--rerank", help="Re-score an arm's top-k: [cross:|bi:]MODEL[@DEPTH] (default depth 100)."),
]
RerankArmOpt = Annotated[
    list[str] | None, _opt("--rerank-arm", help="Arm to rerank (default the mode's main arm).")
]
DepthOpt = Annotated[int, _opt("--depth", help=f"Results per query (10..{MAX_DEPTH}).")]
CandidatesOpt = Annotated[int | None, _opt("--num-candidates", help="kNN candidates (default 10 × depth).")]
Bm25Opt = Annotated[
    str, _opt("--bm25", help=f"BM25 parameters: {', '.join(BM25_FIELDS)} (r2med: k1=0.9, b=0.4).")
]
LexicalFieldOpt = Annotated[str, _opt("--lexical-field", help=f"{' or '.join(LEXICAL_FIELDS)}.")]
BatchOpt = Annotated[int, _opt("--batch-size", help="Searches per msearch request.")]
ConcurrencyOpt = Annotated[int, _opt("--concurrency", help="msearch requests in flight.")]
TimeoutOpt = Annotated[float, _opt("--timeout", help="Seconds per msearch request.")]
RetriesOpt = Annotated[int, typer.Option("--max-retries", min=0, max=50, help="Retries per msearch request.")]
TestOpt = Annotated[str, _opt("--test", help=f"Significance test: {', '.join(STAT_TESTS)}.")]
SeedOpt = Annotated[int, typer.Option("--seed")]
OutputOpt = Annotated[
    Path | None, _opt("--output", "-o", help="Run directory (default runs/<mode>-<config hash>).")
]
RecordsOpt = Annotated[str, _opt("--records", help="Evaluation record sinks: jsonl,es | jsonl | none.")]
RecordsUrlOpt = Annotated[str | None, _opt("--records-url", help="Write records to this cluster instead.")]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress")]


@with_connection
def run_command(
    mode: ModeArg,
    dataset: DatasetOpt = None,
    split: SplitOpt = None,
    model: ModelOpt = "minilm",
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    revision: RevisionOpt = None,
    query_prompt: QueryPromptOpt = None,
    fusion: FusionOpt = "rrf",
    tune_on: TuneOnOpt = None,
    expansion: ExpansionOpt = None,
    rerank: RerankOpt = None,
    rerank_arm: RerankArmOpt = None,
    depth: DepthOpt = 100,
    num_candidates: CandidatesOpt = None,
    bm25: Bm25Opt = "es",
    lexical_field: LexicalFieldOpt = "combined",
    analysis: AnalysisOpt = None,
    batch_size: BatchOpt = 32,
    concurrency: ConcurrencyOpt = 2,
    timeout: TimeoutOpt = 60.0,
    max_retries: RetriesOpt = 5,
    test: TestOpt = "randomization",
    seed: SeedOpt = 42,
    output: OutputOpt = None,
    records: RecordsOpt = "jsonl,es",
    records_url: RecordsUrlOpt = None,
    progress: ProgressOpt = True,
    *,
    conn: ConnectionSettings,
) -> None:
    """Run lexical, vector or hybrid retrieval, evaluate with ranx, and write a run directory."""
    config = RunConfig(
        mode=mode,
        datasets=tuple(dataset or ["r2med"]),
        split=split,
        revision=revision,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        query_prompt=query_prompt,
        fusion=fusion,
        tune_on=tune_on,
        expansion=expansion,
        rerank=rerank,
        rerank_arms=tuple(rerank_arm or ()),
        depth=depth,
        num_candidates=num_candidates,
        bm25=bm25,
        lexical_field=lexical_field,
        analysis=analysis,
        search=SearchOptions(
            batch_size=batch_size, concurrency=concurrency, timeout_s=timeout, max_retries=max_retries
        ),
        test=test,
        seed=seed,
        output=output,
        records=records,
        records_url=records_url,
        progress=progress,
    )
    run_dir, results = run(config, conn, console=console)
    print_results(results, console)
    console.print(
        f"\nrun directory: {run_dir}  (results.json, report.md, per_query.jsonl, runs/, records.jsonl)"
    )


def print_results(results: RunResults, out: Console) -> None:
    """Every dataset's arm table, then its paired tests."""
    for name, ds in results.datasets.items():
        print_table(arm_table(name, ds), out)
        if ds.significance:
            print_table(significance_table(name, ds.significance), out)


def compare(
    run_dirs: Annotated[list[Path], typer.Argument(help="Two or more run directories.")],
    test: Annotated[str, typer.Option("--test", help=f"{', '.join(STAT_TESTS)}.")] = "randomization",
    measure: Annotated[str, typer.Option("--measure")] = "ndcg@10",
    alpha: Annotated[float, typer.Option("--alpha")] = 0.05,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the comparisons here.")] = None,
) -> None:
    """Paired significance tests across runs (Holm-corrected over arms × datasets)."""
    comparisons = compare_runs(run_dirs, test=test, measure=measure, alpha=alpha)
    title = f"{measure}: paired {test} tests, Holm-corrected over {len(comparisons)} comparisons"
    print_table(significance_table("compare", comparisons, title=title, with_dataset=True), console)
    if json_out is not None:
        write_json_atomic(json_out, [c.to_dict() for c in comparisons])


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("compare")(compare)
