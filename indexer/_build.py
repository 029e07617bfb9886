"""Build, resume, verify and publish a corpus index.

``build_index`` is idempotent: documents already in the physical index are
skipped, documents lacking only a model's vectors get partial updates (the
text side is never rebuilt), and the alias moves to the index only after it
passes verification (document count and per-model vector counts equal the
corpus size, and the recorded fingerprint matches the data).

One module per concern: where the corpus goes and how the index is opened (``_target``), what an
existing index holds (``_present``), what is refused before anything changes (``_conflicts``), the load
itself (``_load``), and verification and publication (``_publish``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from base import phase
from indexer._build_options import WINDOW, IndexOptions, IndexSummary
from indexer._conflicts import check_published, check_vector_conflicts
from indexer._layout import vector_spec
from indexer._load import BULK, EMBED, LOADING_SETTINGS, load, vector_sources
from indexer._present import existing_by_ids, existing_docs
from indexer._publish import RELEASE_WAIT_S, finish, publish, resolve_alias, serving_settings, verify
from indexer._target import add_vector_fields, creation_body, new_meta, open_index, plan_layout
from indexer.backends import Backend, Capabilities
from indexer.data import Dataset
from indexer.embed import CachedEmbedder

__all__ = [
    "BULK",
    "EMBED",
    "LOADING_SETTINGS",
    "RELEASE_WAIT_S",
    "WINDOW",
    "IndexOptions",
    "IndexSummary",
    "build_index",
    "existing_by_ids",
    "existing_docs",
    "publish",
    "resolve_alias",
    "serving_settings",
    "verify",
]


def build_index(
    backend: Backend,
    dataset: Dataset,
    embedders: Sequence[CachedEmbedder] = (),
    options: IndexOptions | None = None,
    *,
    console: Console | None = None,
    caps: Capabilities | None = None,
) -> IndexSummary:
    """Build (or resume, or extend with new models) the dataset's index, verify it, then publish its alias.

    Everything the engine could refuse up front (the analysis chain, the vector fields in its
    dialect: no k-NN plugin, a native k-NN engine) is checked before anything is created, and so are
    the vector fields of the index the alias publishes now, whatever numerics this build computes.
    """
    options = options or IndexOptions()
    console = console or Console(stderr=True)
    caps = caps or backend.probe()
    started = time.perf_counter()
    layout = plan_layout(backend, dataset, embedders, options, caps)
    name, alias = layout.name, layout.alias
    dims = {f: emb.spec.dims or emb.encoder.dims for emb, f in zip(embedders, layout.fields, strict=True)}
    vectors = (
        {f: backend.vector_mapping(vector_spec(d, options.vector)) for f, d in dims.items()}
        if layout.mapping is None
        else {}  # the user's mapping holds its vector field (checked by plan_layout)
    )
    check_published(backend, alias, name, embedders, layout.fields, dims)
    replicas = options.replicas if options.replicas is not None else layout.default_replicas(caps)
    meta = new_meta(dataset, layout, caps, replicas)
    meta, created = open_index(backend, name, dataset, creation_body(layout, options, meta, vectors))
    if not created:
        check_vector_conflicts(backend, name, embedders, layout.fields, dims)
        replicas = options.replicas if options.replicas is not None else int(meta.get("replicas", replicas))
    add_vector_fields(backend, layout, embedders, vectors, dims, options, meta)

    summary = IndexSummary(
        alias=alias,
        index=name,
        dataset=dataset.name,
        docs=dataset.corpus_size,
        seconds=0.0,
        created=created,
        analysis=layout.analysis,
    )
    summary.models = {f: m["model_id"] for f, m in meta["models"].items()}
    fields = layout.fields
    with phase("verify"):  # what an existing index already holds
        present = {} if created else layout.existing(backend, dataset)
    complete = sum(1 for have in present.values() if all(f in have for f in fields))
    if complete == dataset.corpus_size and len(present) == dataset.corpus_size:
        summary.skipped = complete
    else:
        held = {f: sum(1 for have in present.values() if f in have) for f in fields}
        lacking = {f for f in fields if held[f] < dataset.corpus_size}
        sources = vector_sources(dataset, embedders, fields, lacking, console, summary, say=options.progress)
        summary.retries = load(backend, layout, dataset, sources, present, options, console, summary).retries
    _record_vectors(meta, summary)
    for emb in embedders:
        summary.cache_hits += emb.stats.cache_hits
        summary.cache_misses += emb.stats.cache_misses
        summary.model_calls += emb.stats.model_calls
        summary.embed_seconds += emb.stats.seconds
    # an index that needed nothing keeps its serving settings (an operator may have changed its replicas)
    untouched = (
        meta.get("status") == "published"
        and summary.skipped == dataset.corpus_size
        and options.replicas is None
    )
    with phase("verify"):  # count, refresh, serving settings, publish
        summary.mapping_hash = finish(
            backend, layout, dataset, fields, meta, None if untouched else replicas, console
        )
    summary.published = True
    summary.seconds = time.perf_counter() - started
    return summary


def _record_vectors(meta: dict[str, Any], summary: IndexSummary) -> None:
    """Which vectors each field holds, in the index ``_meta`` (said by this load) and in ``summary`` (as
    recorded, for a field this load did not touch)."""
    for field_name, record in meta["models"].items():
        said = summary.vectors.get(field_name)
        if said is not None:
            record["vectors"] = said
            record["bundled"] = field_name in summary.bundled
        elif record.get("vectors"):
            summary.vectors[field_name] = str(record["vectors"])
            if record.get("bundled") and field_name not in summary.bundled:
                summary.bundled.append(field_name)
