"""`harness index` and `harness indices list|delete`."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from base import ConfigError, EngineUnavailable, IndexingError
from harness.cli._common import CONNECTION, CONNECTION_ALIASES, URL, console
from harness.cli._options import Deprecated, with_deprecated
from harness.cli._views import Flag, with_keys
from harness.experiment import (
    DataTable,
    EmbeddingTable,
    IndexTable,
    OutputTable,
    Settings,
    View,
    read_mapping,
)
from harness.keys import declared
from indexer import (
    CachedEmbedder,
    ConnectionSettings,
    EmbeddingCache,
    IndexOptions,
    IndexSummary,
    adopt_bundled,
    build_index,
    connect,
    delete_indices,
    list_indices,
    load_dataset,
    resolve_deletion,
    resolve_specs,
)

__all__ = ["index", "register"]

#: the index keys ``harness run`` alone reads (how the lexical arm searches)
SEARCH_SIDE = ("bm25", "lexical_field")
VIEW = View(
    "harness index",
    tables=("embedding", *CONNECTION),
    keys=(
        "data.datasets",
        "data.revision",
        "output.quiet",
        *(f"index.{n}" for n in declared(IndexTable) if n not in SEARCH_SIDE),
    ),
)
DATA, EMBED, LAYOUT, OUT = "Data", "Embedding", "Index layout", "Output"
VECTOR, BULK = "Vector index (advanced)", "Bulk loading (advanced)"
#: the flag of each key (the others: --set KEY=VALUE, or the experiment file)
FLAGS: tuple[Flag, ...] = (
    Flag("data.datasets", ("--dataset", "-d"), DATA, metavar="NAME"),
    Flag("data.revision", ("--revision",), DATA),
    Flag("embedding.model", ("--embed-model",), EMBED, metavar="MODEL", many=True),
    Flag("embedding.backend", ("--embed-backend",), EMBED),
    Flag("embedding.url", ("--embed-url",), EMBED, metavar="URL"),
    Flag("embedding.key_env", ("--embed-key-env",), EMBED, metavar="VAR"),
    Flag("embedding.query_prompt", ("--query-prompt",), EMBED),
    Flag("embedding.document_prompt", ("--document-prompt",), EMBED),
    Flag("embedding.trust_remote_code", ("--trust-remote-code",), EMBED),
    Flag("index.analysis", ("--analysis",), LAYOUT),
    Flag("index.mapping", ("--mapping",), LAYOUT, metavar="FILE"),
    Flag("index.field_map", ("--field-map",), LAYOUT, metavar="MAP"),
    Flag("index.shards", ("--shards",), LAYOUT),
    Flag("index.replicas", ("--replicas",), LAYOUT),
    Flag("index.vector_type", ("--vector-type",), VECTOR),
    Flag("index.hnsw_m", ("--hnsw-m",), VECTOR),
    Flag("index.hnsw_ef_construction", ("--hnsw-ef-construction",), VECTOR),
    Flag("index.knn_engine", ("--knn-engine",), VECTOR),
    Flag("index.workers", ("--workers",), BULK),
    Flag("index.chunk_mb", ("--chunk-mb",), BULK),
    Flag("index.max_retries", ("--max-retries",), BULK),
    Flag("output.quiet", ("--quiet", "-q"), OUT),
    URL,
)
NoVectorsOpt = Annotated[
    bool, typer.Option("--no-vectors", help="Index the BM25 text side only.", rich_help_panel=EMBED)
]


def _embedders(keys: Settings, no_vectors: bool, progress: bool) -> list[CachedEmbedder]:
    """One embedder per model given (``--embed-model`` repeated), of the embedding table's keys."""
    if no_vectors:
        if "embedding.model" in keys.given:
            raise keys.fail(
                "embedding.model", "names a model to embed with: expected no --no-vectors with it"
            )
        return []
    emb = keys.table(EmbeddingTable)
    cache = EmbeddingCache()
    models = dict.fromkeys((emb.model, *keys.more.get("embedding.model", ())))
    return [emb.embedder(m, emb.query_prompt, emb.document_prompt, progress, cache) for m in models]


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


#: the names `harness index` took before (hidden; one release)
OLD_NAMES = (
    Deprecated("--model", "embed_model", kind=list[str], short="-m"),
    Deprecated("--base-url", "embed_url"),
    Deprecated("--api-key-env", "embed_key_env"),
    Deprecated("--no-progress", "quiet", flag=True),
    Deprecated("--progress", "quiet", flag=True, value=False, new="leaving it out (progress is the default)"),
    *CONNECTION_ALIASES,
)


@with_deprecated(*OLD_NAMES)
@with_keys(VIEW, FLAGS, panel=OUT)
def index(no_vectors: NoVectorsOpt = False, *, keys: Settings) -> None:
    """Index datasets: BM25 text and one vector field per model; resumable; published only when verified."""
    if "data.datasets" not in keys.given:
        raise ConfigError("expected the datasets to index (--dataset NAME, repeatable), found none")
    data, quiet = keys.table(DataTable), keys.table(OutputTable).quiet
    table = keys.table(IndexTable)
    options = table.options(read_mapping(table, keys.origins), progress=not quiet)
    embedders = _embedders(keys, no_vectors, not quiet)
    specs = [s for d in data.datasets for s in resolve_specs(d)]
    _index_all(keys.connection(), specs, embedders, options, data.revision)


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


#: what ``harness indices`` reads: the connection
CLUSTER = View("harness indices", tables=CONNECTION)


@indices_app.command("list")
@with_deprecated(*CONNECTION_ALIASES)
@with_keys(CLUSTER, (URL,))
def list_command(*, keys: Settings) -> None:
    """Show alias, index, dataset, models, docs and size."""
    backend = connect(keys.connection(), wait_for_status=None)
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
@with_deprecated(*CONNECTION_ALIASES)
@with_keys(CLUSTER, (URL,))
def delete_command(
    names: Annotated[
        list[str], typer.Argument(help="Index names, or aliases (deletes the indices behind them).")
    ],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    *,
    keys: Settings,
) -> None:
    """Delete harness indices (only ones this harness created)."""
    backend = connect(keys.connection(), wait_for_status=None)
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
