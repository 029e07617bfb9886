"""`harness run lexical|vector|hybrid`: flags in, typed config, tables out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from harness._search import SearchOptions
from harness.ann import DEFAULT_CANDIDATES, SweepOptions
from harness.cli._common import console, with_connection
from harness.cli._embedding import (
    DEFAULT_EMBED_BACKEND,
    MODEL_HELP,
    DocumentPromptOpt,
    EmbedBackendOpt,
    QueryPromptOpt,
    TrustRemoteCodeOpt,
)
from harness.cli._endpoint import ApiKeyEnvOpt, BaseUrlOpt
from harness.cli._experiment import with_experiment
from harness.cli._index import FieldMapOpt, MappingOpt
from harness.eval import STAT_TESTS
from harness.inspect import dataset_tables, print_table
from harness.load import DEFAULT_DURATION_S, DEFAULT_WARMUP_S, MAX_CLIENTS, LoadOptions
from harness.results import RunResults
from harness.run import MAX_DEPTH, RunConfig, run
from harness.strategies import LEXICAL_FIELDS, MODES
from indexer import ANALYSIS_CHAINS, BM25_FIELDS, ConfigError, ConnectionSettings

CANDIDATES_TEXT = ",".join(map(str, DEFAULT_CANDIDATES))


def _opt(*names: str, help: str) -> Any:
    return typer.Option(*names, help=help)


ModeArg = Annotated[
    str, typer.Argument(help=f"{', '.join(MODES)} (none with --experiment FILE).", show_default=False)
]
DatasetOpt = Annotated[
    list[str] | None,
    _opt("--dataset", "-d", help="r2med (all eight; default), r2med/<Name>, sample, or a folder."),
]
SplitOpt = Annotated[
    str | None, _opt("--split", help="Evaluation split for BEIR-style datasets (default test).")
]
ModelOpt = Annotated[str, _opt("--model", "-m", help=MODEL_HELP)]
RevisionOpt = Annotated[
    str | None, _opt("--revision", help="Hub revision for r2med datasets (default: the pinned commit).")
]
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
    _opt(
        "--tune-on",
        help="Choose the fusion held out: on a split (train; also tunes the in-engine sum), or by "
        "k-fold cross-validation over the queries (kfold, kfold:K; default 5, seeded by --seed).",
    ),
]
SweepFusionOpt = Annotated[
    str | None,
    _opt(
        "--sweep-fusion",
        help="The grid --tune-on chooses from: default|weights|rrf, or e.g. "
        "'method=rrf,wsum,combmnz;norm=min-max,zmuv;weights=0.1..0.9/0.1;k=20,60' "
        "(default: --fusion's method and its parameter).",
    ),
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
    _opt("--rerank", help="Re-score an arm's top-k: \\[cross:|bi:]MODEL\\[@DEPTH] (default depth 100)."),
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
RecordsOpt = Annotated[
    str | None, _opt("--records", help="Evaluation record sinks: jsonl,es (default) | jsonl | none.")
]
RecordsUrlOpt = Annotated[str | None, _opt("--records-url", help="Write records to this cluster instead.")]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress")]
LoadOpt = Annotated[
    bool,
    _opt(
        "--load",
        help="After the relevance pass, replay each arm's queries as single requests (Rally's measures).",
    ),
]
ClientsOpt = Annotated[int, _opt("--clients", help=f"Load: clients sending at once (1..{MAX_CLIENTS}).")]
DurationOpt = Annotated[
    float | None, _opt("--duration", help=f"Load: seconds measured per arm (default {DEFAULT_DURATION_S:g}).")
]
IterationsOpt = Annotated[
    int | None, _opt("--iterations", help="Load: passes over the queries per arm (instead of --duration).")
]
TargetOpt = Annotated[
    float | None,
    _opt("--target-throughput", help="Load: requests/s; latency is then taken from each scheduled start."),
]
WarmupOpt = Annotated[float, _opt("--warmup", help="Load: seconds of warm-up per arm, not measured.")]
LoadTimeoutOpt = Annotated[
    float, _opt("--load-timeout", help="Load: seconds a request may take before it is an error.")
]
AnnRecallOpt = Annotated[
    bool, typer.Option("--ann-recall/--no-ann-recall", help="Recall of vector arms against exact search.")
]
AnnSweepOpt = Annotated[
    bool, _opt("--ann-sweep", help="Sweep vector index types x candidates: recall, nDCG, latency, size.")
]
AnnTypesOpt = Annotated[
    str | None,
    _opt("--ann-index-types", help="Sweep these index types, e.g. hnsw,int8_hnsw,flat (default: probed)."),
]
AnnCandidatesOpt = Annotated[
    str, _opt("--ann-candidates", help="Sweep these candidate counts (OpenSearch: ef_search).")
]


@with_experiment
@with_connection
def run_command(
    mode: ModeArg = "",
    dataset: DatasetOpt = None,
    split: SplitOpt = None,
    model: ModelOpt = "minilm",
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    revision: RevisionOpt = None,
    embed_backend: EmbedBackendOpt = DEFAULT_EMBED_BACKEND,
    query_prompt: QueryPromptOpt = None,
    document_prompt: DocumentPromptOpt = None,
    trust_remote_code: TrustRemoteCodeOpt = False,
    fusion: FusionOpt = "rrf",
    tune_on: TuneOnOpt = None,
    sweep_fusion: SweepFusionOpt = None,
    expansion: ExpansionOpt = None,
    rerank: RerankOpt = None,
    rerank_arm: RerankArmOpt = None,
    depth: DepthOpt = 100,
    num_candidates: CandidatesOpt = None,
    bm25: Bm25Opt = "es",
    lexical_field: LexicalFieldOpt = "combined",
    analysis: AnalysisOpt = None,
    mapping: MappingOpt = None,
    field_map: FieldMapOpt = None,
    batch_size: BatchOpt = 32,
    concurrency: ConcurrencyOpt = 2,
    timeout: TimeoutOpt = 60.0,
    max_retries: RetriesOpt = 5,
    test: TestOpt = "randomization",
    seed: SeedOpt = 42,
    output: OutputOpt = None,
    records: RecordsOpt = None,
    records_url: RecordsUrlOpt = None,
    progress: ProgressOpt = True,
    load: LoadOpt = False,
    clients: ClientsOpt = 1,
    duration: DurationOpt = None,
    iterations: IterationsOpt = None,
    target_throughput: TargetOpt = None,
    warmup: WarmupOpt = DEFAULT_WARMUP_S,
    load_timeout: LoadTimeoutOpt = 10.0,
    ann_recall: AnnRecallOpt = True,
    ann_sweep: AnnSweepOpt = False,
    ann_index_types: AnnTypesOpt = None,
    ann_candidates: AnnCandidatesOpt = CANDIDATES_TEXT,
    *,
    conn: ConnectionSettings,
) -> None:
    """Run lexical, vector or hybrid retrieval, evaluate with ranx, and write a run directory."""
    config = RunConfig(
        mode=mode,
        **_data(dataset, split, revision),
        **_embedding(
            model, base_url, api_key_env, query_prompt, document_prompt, trust_remote_code, embed_backend
        ),
        fusion=fusion,
        tune_on=tune_on,
        sweep=sweep_fusion,
        expansion=expansion,
        **_rerank(rerank, rerank_arm),
        depth=depth,
        num_candidates=num_candidates,
        bm25=bm25,
        lexical_field=lexical_field,
        analysis=analysis,
        **_mapping(mapping, field_map),
        search=SearchOptions(batch_size, concurrency, timeout, max_retries),
        test=test,
        seed=seed,
        output=output,
        records=records or "jsonl,es",
        records_url=records_url,
        progress=progress,
        load=_load(load, clients, duration, iterations, target_throughput, warmup, load_timeout),
        ann_recall=ann_recall,
        ann_sweep=SweepOptions(_names(ann_index_types), _numbers(ann_candidates)) if ann_sweep else None,
    )
    _show(*run(config, conn, console=console))


def _show(run_dir: Path, results: RunResults) -> None:
    print_results(results, console)
    console.print(
        f"\nrun directory: {run_dir}  (results.json, report.md, per_query.jsonl, runs/, records.jsonl)"
    )


def _mapping(mapping: Path | None, field_map: str | None) -> dict[str, Any]:
    """``--mapping`` and ``--field-map``, as RunConfig fields (read and checked there)."""
    return {"mapping": mapping, "field_map": field_map}


def _data(dataset: list[str] | None, split: str | None, revision: str | None) -> dict[str, Any]:
    """Which data the run evaluates, as RunConfig fields."""
    return {"datasets": tuple(dataset or ["r2med"]), "split": split, "revision": revision}


def _rerank(rerank: str | None, arms: list[str] | None) -> dict[str, Any]:
    return {"rerank": rerank, "rerank_arms": tuple(arms or ())}


def _embedding(
    model: str,
    base_url: str | None,
    api_key_env: str | None,
    query_prompt: str | None,
    document_prompt: str | None,
    trust_remote_code: bool,
    embed_backend: str,
) -> dict[str, Any]:
    """The run's embedding choices, as RunConfig fields."""
    return {
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "query_prompt": query_prompt,
        "document_prompt": document_prompt,
        "trust_remote_code": trust_remote_code,
        "embed_backend": embed_backend,
    }


def _load(
    on: bool,
    clients: int,
    duration: float | None,
    iterations: int | None,
    target: float | None,
    warmup: float,
    timeout: float,
) -> LoadOptions | None:
    """``--load`` and its options as :class:`LoadOptions` (validated there), or None without ``--load``."""
    return LoadOptions(clients, duration, iterations, target, warmup, timeout) if on else None


def _names(text: str | None) -> tuple[str, ...] | None:
    return tuple(t.strip() for t in text.split(",") if t.strip()) if text is not None else None


def _numbers(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise ConfigError(
            f"expected --ann-candidates as integers separated by commas, found {text!r}"
        ) from None


def print_results(results: RunResults, out: Console) -> None:
    """Every dataset's arm table, its load phase and ANN sweep (when measured), then its paired tests."""
    for name, ds in results.datasets.items():
        for table in dataset_tables(name, ds):
            print_table(table, out)


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
