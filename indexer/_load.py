"""Loading a corpus into its index: windows of documents read, given the vectors they lack (embedded, or
shipped with the package for a bundled corpus: :mod:`indexer.embed._bundled`), and sent in bulk, the next
window embedded on its own thread while this one is sent."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np
from rich.console import Console

from base import Stage, Tracker, phase, progress
from indexer._ahead import ahead
from indexer._build_options import IndexOptions, IndexSummary
from indexer._bulk import BulkLoader, BulkStats
from indexer._target import Layout
from indexer.backends import Backend
from indexer.data import Dataset, Document
from indexer.embed import BundledVectors, CachedEmbedder, bundle_for, document_text

#: the stages of a load, as progress shows them and timing phases name them
EMBED, BULK = "embed", "bulk"
#: while loading: no refreshes, no replicas (restored by serving_settings). An async translog was measured
#: too (bench/index.py figure a) and gave no gain on our 2-core machines, so durability stays per request.
LOADING_SETTINGS: dict[str, Any] = {"refresh_interval": "-1", "number_of_replicas": 0}


@dataclass(frozen=True, slots=True)
class Source:
    """Where one vector field's vectors come from: its embedder, or vectors shipped for the corpus."""

    embedder: CachedEmbedder
    field: str
    bundled: BundledVectors | None = None


def vector_sources(
    dataset: Dataset,
    embedders: Sequence[CachedEmbedder],
    fields: Sequence[str],
    lacking: set[str],
    console: Console,
    summary: IndexSummary,
    *,
    say: bool = True,
) -> list[Source]:
    """Each field's source: the vectors shipped for the corpus where they serve the model and pass the check
    at first use (re-embedding a few documents with the run's numerics), else its embedder; checked only
    for the fields some document still ``lacking``. Says which, in
    one line per field (``say``) where vectors were shipped for the corpus, and records it in
    ``summary.vectors``."""
    sources = []
    for emb, f in zip(embedders, fields, strict=True):
        if f not in lacking:
            sources.append(Source(emb, f))
            continue
        bundle, line = bundle_for(emb.spec, dataset.fingerprint.corpus)
        if bundle is not None:
            with phase("vectors check"):
                check = bundle.verify(emb.encoder)
            line = check.line(bundle.what)
            bundle = bundle if check.passed else None
            if bundle is not None:
                summary.bundled.append(f)
        if line:
            summary.vectors[f] = line
            if say:
                console.print(f"indexing {dataset.name}: vectors: {line}", highlight=False, soft_wrap=True)
        sources.append(Source(emb, f, bundle))
    return sources


def _window(it: Iterator[Document], n: int) -> Iterator[list[Document]]:
    while True:
        chunk = list(islice(it, n))
        if not chunk:
            return
        yield chunk


def load(
    backend: Backend,
    layout: Layout,
    dataset: Dataset,
    sources: Sequence[Source],
    present: dict[str, set[str]],
    options: IndexOptions,
    console: Console,
    summary: IndexSummary,
) -> BulkStats:
    # loading mode (restored by the caller after the load); idempotent, so always applied
    name = layout.name
    backend.put_settings(name, {"index": LOADING_SETTINGS})
    what = f"indexing {dataset.name}"
    n = dataset.corpus_size
    stages = (
        *((Stage(EMBED, "embedded", n * len(sources)),) if sources else ()),
        Stage(BULK, "indexed", n),
    )
    with progress(what, unit="docs", console=console, enabled=options.progress, stages=stages) as bar:
        loader = BulkLoader(
            backend,
            name,
            workers=options.workers,
            max_chunk_bytes=options.max_chunk_bytes,
            max_retries=options.max_retries,
            on_success=bar.advance,
        )
        embedded_windows = (
            (window, _embed_window(window, sources, present, options.batch_size, bar))
            for window in _window(dataset.iter_corpus(), options.window)
        )
        with _sending(loader, bar):  # the next window is embedded (on its own thread) while this one is sent
            for window, vectors in ahead(embedded_windows, name="embed-ahead"):
                with bar.busy(BULK):  # blocks while the senders are behind (the queue is bounded)
                    _send_window(loader, layout, window, present, vectors, summary, bar)
        loader.raise_for_failures()
    return loader.stats


@contextmanager
def _sending(loader: BulkLoader, bar: Tracker) -> Iterator[BulkLoader]:
    """``loader`` open for the block; waiting for its last chunks as it closes is bulk work too."""
    loader.__enter__()
    try:
        yield loader
    except BaseException as exc:
        loader.__exit__(type(exc), exc, exc.__traceback__)
        raise
    with bar.busy(BULK):
        loader.__exit__(None, None, None)


def _embed_window(
    window: list[Document],
    sources: Sequence[Source],
    present: dict[str, set[str]],
    batch_size: int | None,
    bar: Tracker,
) -> dict[str, dict[str, list[float]]]:
    """The vectors each document of ``window`` still lacks, by id then field (counted as embedded as
    they come, and so are those a document already has)."""
    vectors: dict[str, dict[str, list[float]]] = {d.id: {} for d in window}
    for source in sources:
        f = source.field
        pairs = [(d.id, document_text(d.title, d.text)) for d in window if f not in present.get(d.id, ())]
        bar.count(EMBED, len(window) - len(pairs))
        found: Iterable[tuple[list[str], np.ndarray]]
        with bar.busy(EMBED):
            if source.bundled is not None:
                found = [([doc_id for doc_id, _ in pairs], source.bundled.lookup([i for i, _ in pairs]))]
                bar.count(EMBED, len(pairs))
            else:
                found = source.embedder.embed_documents(
                    pairs, batch_size=batch_size, on_progress=lambda k: bar.count(EMBED, k)
                )
            for ids, vecs in found:
                for doc_id, vec in zip(ids, vecs, strict=True):
                    vectors[doc_id][f] = vec.tolist()
    return vectors


def _send_window(
    loader: BulkLoader,
    layout: Layout,
    window: list[Document],
    present: dict[str, set[str]],
    vectors: dict[str, dict[str, list[float]]],
    summary: IndexSummary,
    bar: Tracker,
) -> None:
    """New documents indexed whole; documents that lack only vectors updated; the rest skipped."""
    for d in window:
        if d.id not in present:
            loader.index_doc(d.id, {**layout.doc(d), **vectors[d.id]})
            summary.indexed += 1
        elif vectors[d.id]:
            loader.update_doc(d.id, vectors[d.id])
            summary.updated += 1
        else:
            summary.skipped += 1
            bar.advance(1)
