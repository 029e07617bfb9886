"""`harness index` and `harness indices list|delete`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

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
from indexer import (
    ANALYSIS_CHAINS,
    KNN_ENGINES,
    VECTOR_INDEX_TYPES,
    CachedEmbedder,
    ConfigError,
    ConnectionSettings,
    EmbeddingCache,
    EngineUnavailable,
    IndexingError,
    IndexOptions,
    IndexSummary,
    UserMapping,
    VectorOptions,
    build_encoder,
    build_index,
    connect,
    delete_indices,
    endpoint_for,
    list_indices,
    load_dataset,
    load_user_mapping,
    resolve_deletion,
    resolve_model,
    resolve_specs,
)

ModelOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help=f"{MODEL_HELP} Repeat for several (default minilm).",
    ),
]
NoVectorsOpt = Annotated[bool, typer.Option("--no-vectors", help="Index the BM25 text side only.")]
AnalysisOpt = Annotated[
    str | None,
    typer.Option(
        "--analysis",
        help=f"Text analysis chain: {' | '.join(ANALYSIS_CHAINS)} (default: the first the engine offers).",
    ),
]

MappingOpt = Annotated[
    Path | None,
    typer.Option(
        "--mapping",
        help="Your own index-creation body (JSON: settings, analyzers, mappings); the harness fills only "
        "the fields --field-map names.",
    ),
]
FieldMapOpt = Annotated[
    str | None,
    typer.Option(
        "--field-map",
        help="Where --mapping keeps the corpus: title=FIELD,text=FIELD,vector=FIELD (default: the "
        "harness's names title, text and the model's field, where mapped).",
    ),
]


def user_mapping(mapping: Path | None, field_map: str | None) -> UserMapping | None:
    """``--mapping`` and ``--field-map``, read and checked (a ConfigError naming file and JSON path)."""
    if mapping is None:
        if field_map is not None:
            raise ConfigError("--field-map says where --mapping keeps the corpus, so it needs --mapping FILE")
        return None
    return load_user_mapping(mapping, field_map)


def make_embedders(
    models: list[str] | None,
    *,
    no_vectors: bool = False,
    base_url: str | None = None,
    api_key_env: str | None = None,
    backend: str = DEFAULT_EMBED_BACKEND,
    query_prompt: str | None = None,
    document_prompt: str | None = None,
    trust_remote_code: bool = False,
    progress: bool = False,
) -> list[CachedEmbedder]:
    if no_vectors:
        if models:
            raise ConfigError("--no-vectors and --model exclude each other")
        return []
    names = models or ["minilm"]
    endpoint = endpoint_for(names, base_url, api_key_env)
    cache = EmbeddingCache()
    specs = [
        resolve_model(
            n, query_prompt=query_prompt, document_prompt=document_prompt, trust_remote_code=trust_remote_code
        )
        for n in names
    ]
    return [
        CachedEmbedder(
            build_encoder(spec, endpoint=endpoint, cache=cache, backend=backend, progress=progress), cache
        )
        for spec in specs
    ]


def print_summary(s: IndexSummary) -> None:
    work = "built" if s.created else ("unchanged" if not (s.indexed or s.updated) else "resumed/extended")
    console.print(
        f"[bold]{s.dataset}[/]: {work} {s.index} → alias {s.alias} ({s.analysis} analysis); "
        f"{s.docs:,} docs in {s.seconds:.1f}s "
        f"({s.docs_per_s:,.0f} docs/s); indexed {s.indexed:,}, vectors added {s.updated:,}, already there {s.skipped:,}; "
        f"embedding cache hits {s.cache_hits:,} / misses {s.cache_misses:,}, model calls {s.model_calls:,}; "
        f"bulk retries {s.retries}",
        highlight=False,
    )


KnnEngineOpt = Annotated[
    str | None,
    typer.Option(
        "--knn-engine",
        help=f"OpenSearch k-NN engine: {' | '.join(KNN_ENGINES)} (default lucene; the only one the "
        "managed node can run).",
    ),
]


@with_connection
def index(
    dataset: Annotated[
        list[str],
        typer.Option("--dataset", "-d", help="sample, r2med, r2med/<Name> or a folder; repeatable."),
    ],
    model: ModelOpt = None,
    query_prompt: QueryPromptOpt = None,
    document_prompt: DocumentPromptOpt = None,
    trust_remote_code: TrustRemoteCodeOpt = False,
    embed_backend: EmbedBackendOpt = DEFAULT_EMBED_BACKEND,
    no_vectors: NoVectorsOpt = False,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    revision: Annotated[
        str | None,
        typer.Option("--revision", help="Hub revision for r2med datasets (default: the pinned commit)."),
    ] = None,
    vector_type: Annotated[
        str, typer.Option("--vector-type", help=f"One of {', '.join(VECTOR_INDEX_TYPES)}.")
    ] = "hnsw",
    hnsw_m: Annotated[int, typer.Option("--hnsw-m", min=2, max=512)] = 16,
    hnsw_ef_construction: Annotated[int, typer.Option("--hnsw-ef-construction", min=10, max=3200)] = 100,
    knn_engine: KnnEngineOpt = None,
    analysis: AnalysisOpt = None,
    mapping: MappingOpt = None,
    field_map: FieldMapOpt = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=32, help="Parallel bulk senders.")] = 2,
    chunk_mb: Annotated[
        float, typer.Option("--chunk-mb", min=0.1, max=100, help="Bulk request size in MiB.")
    ] = 4.0,
    replicas: Annotated[int | None, typer.Option("--replicas", min=0, max=5)] = None,
    shards: Annotated[int, typer.Option("--shards", min=1, max=64)] = 1,
    max_retries: Annotated[
        int,
        typer.Option(
            "--max-retries", min=0, max=50, help="Retries per bulk request (429, 5xx, connection lost)."
        ),
    ] = 10,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    *,
    conn: ConnectionSettings,
) -> None:
    """Index datasets: BM25 text and one vector field per model; resumable; published only when verified."""
    settings = conn
    options = IndexOptions(
        vector=VectorOptions(vector_type, hnsw_m, hnsw_ef_construction, knn_engine),
        analysis=analysis,
        mapping=user_mapping(mapping, field_map),
        workers=workers,
        max_chunk_bytes=int(chunk_mb * 1024 * 1024),
        replicas=replicas,
        shards=shards,
        progress=progress,
        max_retries=max_retries,
    )
    embedders = make_embedders(
        model,
        no_vectors=no_vectors,
        base_url=base_url,
        api_key_env=api_key_env,
        backend=embed_backend,
        query_prompt=query_prompt,
        document_prompt=document_prompt,
        trust_remote_code=trust_remote_code,
        progress=progress,
    )
    _index_all(settings, [s for d in dataset for s in resolve_specs(d)], embedders, options, revision)


def _index_all(
    settings: ConnectionSettings,
    specs: list[Any],
    embedders: list[Any],
    options: IndexOptions,
    revision: str | None,
) -> None:
    backend = connect(settings)
    try:
        for spec in specs:
            ds = load_dataset(spec, revision=revision)
            try:
                summary = build_index(backend, ds, embedders, options, console=console)
            except EngineUnavailable as exc:  # the connection dropped outside the retried bulk path
                raise IndexingError(
                    f"lost the connection to {backend.product} at {settings.url} while indexing {ds.name}: "
                    f"{exc}. The alias moves only after a verified load, so no partial index is published; "
                    "the same command resumes from the documents already indexed"
                ) from None
            print_summary(summary)
    finally:
        backend.close()


indices_app = typer.Typer(help="List and delete the harness's indices.", no_args_is_help=True)


@indices_app.command("list")
@with_connection
def list_command(*, conn: ConnectionSettings) -> None:
    """Show alias, index, dataset, models, docs and size."""
    backend = connect(conn, wait_for_status=None)
    try:
        found = list_indices(backend)
    finally:
        backend.close()
    table = Table("alias", "index", "dataset", "status", "analysis", "models", "docs", "size")
    for info in found:
        table.add_row(
            ", ".join(info.aliases) or "-",
            info.name,
            info.dataset,
            info.status,
            info.analysis,
            ", ".join(m.rsplit("/", 1)[-1] for m in info.models) or "(BM25 only)",
            f"{info.docs:,}",
            f"{info.size_bytes / 1e6:,.1f} MB",
        )
    console.print(table)


@indices_app.command("delete")
@with_connection
def delete_command(
    names: Annotated[
        list[str], typer.Argument(help="Index names, or aliases (deletes the indices behind them).")
    ],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    *,
    conn: ConnectionSettings,
) -> None:
    """Delete harness indices (only ones this harness created)."""
    backend = connect(conn, wait_for_status=None)
    try:
        targets = resolve_deletion(backend, names)
        if not yes and not typer.confirm(f"delete {', '.join(targets)}?"):
            raise typer.Exit(1)
        for target in delete_indices(backend, targets):
            console.print(f"deleted {target}")
    finally:
        backend.close()


def register(app: typer.Typer) -> None:
    app.command("index")(index)
    app.add_typer(indices_app, name="indices")
