"""`harness index` and `harness indices list|delete`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from base import ConfigError, EngineUnavailable, IndexingError
from harness.cli._common import CONNECTION_NAMES, console, with_connection
from harness.cli._options import (
    Deprecated,
    DocumentPromptOpt,
    EmbedBackendOpt,
    EmbedKeyEnvOpt,
    EmbedModelsOpt,
    EmbedUrlOpt,
    FieldMapOpt,
    MappingOpt,
    QueryPromptOpt,
    QuietOpt,
    RevisionOpt,
    TrustRemoteCodeOpt,
    given,
    retries_option,
    with_deprecated,
    with_panels,
)
from indexer import (
    ANALYSIS_CHAINS,
    DEFAULT_EMBED_BACKEND,
    DEFAULT_MODEL,
    KNN_ENGINES,
    VECTOR_INDEX_TYPES,
    CachedEmbedder,
    ConnectionSettings,
    EmbeddingCache,
    FieldMapError,
    IndexOptions,
    IndexSummary,
    UserMapping,
    VectorOptions,
    adopt_bundled,
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

__all__ = ["FieldMapOpt", "MappingOpt", "index", "make_embedders", "register", "user_mapping"]

_DEFAULT = IndexOptions()
_VECTOR = _DEFAULT.vector
MIB = 1024 * 1024

DatasetOpt = Annotated[
    list[str], typer.Option("--dataset", "-d", help="sample, r2med, r2med/<Name> or a folder; repeatable.")
]
NoVectorsOpt = Annotated[bool, typer.Option("--no-vectors", help="Index the BM25 text side only.")]
AnalysisOpt = Annotated[
    str | None,
    typer.Option(
        "--analysis",
        help=f"Text analysis chain: {' | '.join(ANALYSIS_CHAINS)} (default: the first the engine offers).",
    ),
]
VectorTypeOpt = Annotated[
    str | None,
    typer.Option(
        "--vector-type", help=f"One of {', '.join(VECTOR_INDEX_TYPES)} (default {_VECTOR.index_type})."
    ),
]
HnswMOpt = Annotated[
    int | None, typer.Option("--hnsw-m", min=2, max=512, help=f"HNSW graph degree (default {_VECTOR.m}).")
]
HnswEfOpt = Annotated[
    int | None,
    typer.Option(
        "--hnsw-ef-construction",
        min=10,
        max=3200,
        help=f"HNSW candidates while building (default {_VECTOR.ef_construction}).",
    ),
]
KnnEngineOpt = Annotated[
    str | None,
    typer.Option(
        "--knn-engine",
        help=f"OpenSearch k-NN engine: {' | '.join(KNN_ENGINES)} (default lucene; the only one the "
        "managed node can run).",
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", min=1, max=32, help=f"Parallel bulk senders (default {_DEFAULT.workers})."),
]
ChunkOpt = Annotated[
    float | None,
    typer.Option(
        "--chunk-mb",
        min=0.1,
        max=100,
        help=f"Bulk request size in MiB (default {_DEFAULT.max_chunk_bytes / MIB:g}).",
    ),
]
ReplicasOpt = Annotated[
    int | None,
    typer.Option(
        "--replicas",
        min=0,
        max=5,
        help="Replicas once loaded (default: your --mapping's, else 0 on a one-node cluster and 1 otherwise).",
    ),
]
ShardsOpt = Annotated[
    int | None, typer.Option("--shards", min=1, max=64, help=f"Primary shards (default {_DEFAULT.shards}).")
]
IndexRetriesOpt = Annotated[
    int | None, retries_option("bulk request (429, 5xx, connection lost)", _DEFAULT.max_retries)
]


def user_mapping(mapping: Path | None, field_map: str | None) -> UserMapping | None:
    """``--mapping`` and ``--field-map``, read and checked (a ConfigError naming file and JSON path)."""
    if mapping is None:
        if field_map is not None:
            raise ConfigError("--field-map says where --mapping keeps the corpus, so it needs --mapping FILE")
        return None
    try:
        return load_user_mapping(mapping, field_map)
    except FieldMapError as exc:
        raise ConfigError(f"--field-map {field_map}: {exc}") from None


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
            raise ConfigError("--no-vectors and --embed-model exclude each other")
        return []
    names = models or [DEFAULT_MODEL]
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


PANELS = {
    "Data": ("dataset", "revision"),
    "Embedding": (
        "embed_model",
        "no_vectors",
        "embed_backend",
        "embed_url",
        "embed_key_env",
        "query_prompt",
        "document_prompt",
        "trust_remote_code",
    ),
    "Index layout": (
        "analysis",
        "mapping",
        "field_map",
        "shards",
        "replicas",
    ),
    "Vector index (advanced)": ("vector_type", "hnsw_m", "hnsw_ef_construction", "knn_engine"),
    "Bulk loading (advanced)": ("workers", "chunk_mb", "max_retries"),
    "Output": ("quiet",),
    "Cluster": CONNECTION_NAMES,
}
#: the names `harness index` took before one name per concept (hidden; one release)
OLD_NAMES = (
    Deprecated("--model", "embed_model", kind=list[str], short="-m"),
    Deprecated("--base-url", "embed_url"),
    Deprecated("--api-key-env", "embed_key_env"),
    Deprecated("--no-progress", "quiet", flag=True),
    Deprecated("--progress", "quiet", flag=True, value=False, new="leaving it out (progress is the default)"),
)


@with_panels(PANELS)
@with_connection
@with_deprecated(*OLD_NAMES)
def index(
    dataset: DatasetOpt,
    revision: RevisionOpt = None,
    embed_model: EmbedModelsOpt = None,
    no_vectors: NoVectorsOpt = False,
    embed_backend: EmbedBackendOpt = None,
    embed_url: EmbedUrlOpt = None,
    embed_key_env: EmbedKeyEnvOpt = None,
    query_prompt: QueryPromptOpt = None,
    document_prompt: DocumentPromptOpt = None,
    trust_remote_code: TrustRemoteCodeOpt = False,
    analysis: AnalysisOpt = None,
    mapping: MappingOpt = None,
    field_map: FieldMapOpt = None,
    shards: ShardsOpt = None,
    replicas: ReplicasOpt = None,
    vector_type: VectorTypeOpt = None,
    hnsw_m: HnswMOpt = None,
    hnsw_ef_construction: HnswEfOpt = None,
    knn_engine: KnnEngineOpt = None,
    workers: WorkersOpt = None,
    chunk_mb: ChunkOpt = None,
    max_retries: IndexRetriesOpt = None,
    quiet: QuietOpt = False,
    *,
    conn: ConnectionSettings,
) -> None:
    """Index datasets: BM25 text and one vector field per model; resumable; published only when verified."""
    vector = VectorOptions(
        **given(index_type=vector_type, m=hnsw_m, ef_construction=hnsw_ef_construction, engine=knn_engine)
    )
    options = IndexOptions(
        vector=vector,
        analysis=analysis,
        mapping=user_mapping(mapping, field_map),
        replicas=replicas,
        progress=not quiet,
        **given(
            workers=workers,
            max_chunk_bytes=None if chunk_mb is None else int(chunk_mb * MIB),
            shards=shards,
            max_retries=max_retries,
        ),
    )
    embedders = make_embedders(
        embed_model,
        no_vectors=no_vectors,
        base_url=embed_url,
        api_key_env=embed_key_env,
        backend=embed_backend or DEFAULT_EMBED_BACKEND,
        query_prompt=query_prompt,
        document_prompt=document_prompt,
        trust_remote_code=trust_remote_code,
        progress=not quiet,
    )
    _index_all(conn, [s for d in dataset for s in resolve_specs(d)], embedders, options, revision)


def _index_all(
    settings: ConnectionSettings,
    specs: list[Any],
    embedders: list[Any],
    options: IndexOptions,
    revision: str | None,
) -> None:
    backend = connect(settings)
    try:
        datasets = [load_dataset(spec, revision=revision) for spec in specs]
        # auto takes the numerics of vectors shipped for every corpus it would embed (the sample's): no check
        adopt_bundled(embedders, [d.fingerprint.corpus for d in datasets])
        for ds in datasets:
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
