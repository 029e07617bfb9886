"""Build, resume, verify and publish a corpus index.

``build_index`` is idempotent: documents already in the physical index are
skipped, documents lacking only a model's vectors get partial updates (the
text side is never rebuilt), and the alias moves to the index only after it
passes verification (document count and per-model vector counts equal the
corpus size, and the recorded fingerprint matches the data).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from rich.console import Console

from base import ConfigError, MappingConflictError, Stage, Tracker, VerificationError, phase, progress
from indexer._ahead import ahead
from indexer._bulk import BulkLoader, BulkStats
from indexer._layout import (
    BM25_PARAMS,
    MAPPING_VERSION,
    VectorOptions,
    alias_for,
    check_analysis,
    choose_analysis,
    index_name,
    mapping_hash,
    numerics_suffix,
    text_side,
    vector_options_record,
    vector_spec,
)
from indexer._user_mapping import UserMapping, check_vector_field
from indexer.backends import Backend, Capabilities
from indexer.data import Dataset, Document
from indexer.embed import REFERENCE_BACKEND, REFERENCE_PRECISION, CachedEmbedder, document_text

WINDOW = 1024
#: the stages of a load, as progress shows them and timing phases name them
EMBED, BULK = "embed", "bulk"
#: while loading: no refreshes, no replicas (restored by serving_settings). An async translog was measured
#: too (bench/index.py figure a) and gave no gain on our 2-core machines, so durability stays per request.
LOADING_SETTINGS: dict[str, Any] = {"refresh_interval": "-1", "number_of_replicas": 0}


def serving_settings(replicas: int, refresh_interval: str = "1s") -> dict[str, Any]:
    """Index settings once a load is over (what the loading settings replace)."""
    return {"refresh_interval": refresh_interval, "number_of_replicas": replicas}


@dataclass(frozen=True, slots=True)
class IndexOptions:
    vector: VectorOptions = field(default_factory=VectorOptions)
    analysis: str | None = None  # english | hunspell | standard; None: the engine's best
    workers: int = 2
    max_chunk_bytes: int = 4 * 1024 * 1024
    replicas: int | None = None  # None: 0 on a one-node cluster, 1 otherwise
    shards: int = 1
    batch_size: int | None = None
    progress: bool = True
    window: int = WINDOW  # documents read, embedded and sent per step
    max_retries: int = 10  # per bulk request (429/5xx/connection errors), with exponential backoff
    #: the user's own index-creation body and field map (``--mapping``); None: the harness's layout
    mapping: UserMapping | None = None

    def __post_init__(self) -> None:
        if self.analysis is not None:
            check_analysis(self.analysis)
            if self.mapping is not None:
                raise ConfigError(
                    f"--analysis {self.analysis} chooses the harness mapping's analysis chain, but "
                    f"--mapping {self.mapping.source} brings its own analysis: expected one of them"
                )


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where the corpus goes: the physical index, its alias, the analysis label and each model's
    vector field (in the order of the embedders); the harness's own mapping or the user's."""

    name: str
    alias: str
    analysis: str
    fields: list[str]
    mapping: UserMapping | None = None

    def doc(self, d: Document) -> dict[str, Any]:
        if self.mapping is not None:
            return self.mapping.source_doc(d.title, d.text)
        return {"id": d.id, "title": d.title, "text": d.text}

    def default_replicas(self, caps: Capabilities) -> int:
        """Replicas without --replicas: the user's body's, else 0 on a one-node cluster and 1 otherwise."""
        own = self.mapping.setting("number_of_replicas") if self.mapping is not None else None
        return int(own) if own is not None else (0 if caps.nodes < 2 else 1)

    @property
    def refresh_interval(self) -> str:
        """Once loaded (loading runs without refreshes): the user's body's, else 1s."""
        own = self.mapping.setting("refresh_interval") if self.mapping is not None else None
        return str(own) if own is not None else "1s"

    def existing(self, backend: Backend, dataset: Dataset) -> dict[str, set[str]]:
        if self.mapping is not None:  # no id field of ours to sort on: ask by _id, a window at a time
            return existing_by_ids(backend, self.name, dataset, self.fields)
        return existing_docs(backend, self.name, self.fields)


@dataclass(slots=True)
class IndexSummary:
    alias: str
    index: str
    dataset: str
    docs: int
    seconds: float
    created: bool
    analysis: str = ""
    indexed: int = 0
    updated: int = 0
    skipped: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    model_calls: int = 0
    embed_seconds: float = 0.0
    retries: int = 0
    published: bool = False
    mapping_hash: str = ""
    models: dict[str, str] = field(default_factory=dict)  # field -> model id

    @property
    def docs_per_s(self) -> float:
        return (self.indexed + self.updated) / self.seconds if self.seconds > 0 else 0.0


def _window(it: Iterator[Document], n: int) -> Iterator[list[Document]]:
    while True:
        chunk = list(islice(it, n))
        if not chunk:
            return
        yield chunk


def existing_docs(backend: Backend, index: str, vector_fields: Sequence[str]) -> dict[str, set[str]]:
    """id -> the vector fields that document already has (search_after over the id field)."""
    backend.refresh(index)
    present: dict[str, set[str]] = {}

    def scan(query: dict[str, Any]) -> Iterator[str]:
        after: tuple[Any, ...] | None = None
        while True:
            body: dict[str, Any] = {
                "query": query,
                "sort": [{"id": "asc"}],
                "size": 5000,
                "_source": False,
                "track_total_hits": False,
            }
            if after:
                body["search_after"] = list(after)
            hits = backend.search(index, body).hits
            if not hits:
                return
            for hit in hits:
                yield hit.id
            after = hits[-1].sort

    for doc_id in scan({"match_all": {}}):
        present[doc_id] = set()
    for vf in vector_fields:
        for doc_id in scan({"exists": {"field": vf}}):
            present.setdefault(doc_id, set()).add(vf)
    return present


def existing_by_ids(
    backend: Backend, index: str, dataset: Dataset, vector_fields: Sequence[str], window: int = 1000
) -> dict[str, set[str]]:
    """id -> the vector fields that document already has, asked by ``_id`` (any mapping)."""
    backend.refresh(index)
    present: dict[str, set[str]] = {}
    ids_iter = (d.id for d in dataset.iter_corpus())
    while chunk := list(islice(ids_iter, window)):
        ids = {"ids": {"values": chunk}}
        for f in (None, *vector_fields):
            query = ids if f is None else {"bool": {"filter": [ids, {"exists": {"field": f}}]}}
            body = {"query": query, "size": len(chunk), "_source": False, "track_total_hits": False}
            for hit in backend.search(index, body).hits:
                have = present.setdefault(hit.id, set())
                if f is not None:
                    have.add(f)
    return present


def _check_vector_conflicts(
    backend: Backend,
    index: str,
    embedders: Sequence[CachedEmbedder],
    fields: Sequence[str],
    dims: dict[str, int],
) -> None:
    mapping = backend.get_mapping(index)
    meta_models = mapping.meta.get("models", {})
    for emb, field_name in zip(embedders, fields, strict=True):
        spec = emb.spec
        existing = mapping.properties.get(field_name)
        if existing is None:
            continue
        have = backend.vector_dims(existing)
        if have is None:
            raise MappingConflictError(
                f"mapping conflict on index {index}, field {field_name}: it exists as "
                f"{existing.get('type', 'an object')!r}, not as a {backend.product} vector field, so model "
                f"{spec.model_id}'s vectors cannot go there (nothing was changed). Delete the index "
                "(`harness indices delete`) or rename the field"
            )
        if have != dims[field_name]:
            raise MappingConflictError(
                f"index {index} field {field_name} holds {have}-dimensional vectors, "
                f"but model {spec.model_id} produces {dims[field_name]}; delete the index "
                f"(`harness indices delete`) or use a model with {have} dimensions"
            )
        _check_same_model(index, spec, meta_models.get(field_name))


def _check_same_model(index: str, spec: Any, known: dict[str, Any] | None) -> None:
    if known and known.get("document_prompt", "") != spec.document_prompt:
        raise MappingConflictError(
            f"index {index} field {spec.field_name} was embedded with document prompt "
            f"{known.get('document_prompt', '')!r}, not {spec.document_prompt!r}: vectors made with different "
            "prompts must not mix"
        )
    # indices made before backends existed hold the reference numerics (torch fp32)
    numerics = (
        f"{known.get('backend', REFERENCE_BACKEND)}/{known.get('precision', REFERENCE_PRECISION)}"
        if known
        else ""
    )
    if known and numerics != spec.numerics:
        raise MappingConflictError(
            f"index {index} field {spec.field_name} holds vectors computed with {numerics}, not "
            f"{spec.numerics}: vectors from different numerics must not mix (indices of other numerics than "
            f"torch/fp32 have names of their own; this one was built before they had); use --embed-backend "
            f"{numerics}, or delete the index (`harness indices delete`) to rebuild it"
        )
    if known and (known.get("model_id"), known.get("revision")) != (spec.model_id, spec.revision):
        raise MappingConflictError(
            f"index {index} field {spec.field_name} was built with {known.get('model_id')}@{known.get('revision')}, "
            f"not {spec.model_id}@{spec.revision}: vectors from different weights must not mix"
        )


def _new_meta(dataset: Dataset, layout: _Layout, caps: Capabilities, replicas: int) -> dict[str, Any]:
    analysis = layout.analysis
    meta = {
        "harness": "r2med-harness",
        "status": "building",
        "dataset": dataset.name,
        "source": dataset.source,
        "fingerprint": {"corpus": dataset.fingerprint.corpus, "combined": dataset.fingerprint.combined},
        "corpus_size": dataset.corpus_size,
        "mapping_version": MAPPING_VERSION,
        "analysis": analysis,
        "bm25": {k: {"k1": v[0], "b": v[1]} for k, v in BM25_PARAMS.items()},
        "engine": {"product": caps.flavour, "version": caps.version, "build_flavour": caps.build_flavour},
        "replicas": replicas,
        "created": datetime.now(UTC).isoformat(),
        "models": {},
    }
    if layout.mapping is not None:  # the user's similarities, not ours; their body and field map
        del meta["bm25"], meta["mapping_version"]
        meta["user_mapping"] = layout.mapping.meta()
    return meta


def _creation_body(
    layout: _Layout, options: IndexOptions, meta: dict[str, Any], vectors: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(settings, mappings) of a new index: the user's body as given (``meta`` added), or our text
    side with ``vectors``, ``meta`` and the shard count."""
    if layout.mapping is not None:
        return layout.mapping.creation_body(meta)
    body = text_side(layout.analysis)
    body["settings"]["index"]["number_of_shards"] = options.shards
    body["mappings"]["_meta"] = meta
    body["mappings"]["properties"].update(vectors)
    return body["settings"], body["mappings"]


def _open_index(
    backend: Backend,
    name: str,
    dataset: Dataset,
    body: tuple[dict[str, Any], dict[str, Any]],
) -> tuple[dict[str, Any], bool]:
    """Create the physical index from ``body`` (settings, mappings with the meta: one request), or
    read the existing one's meta; (meta, created)."""
    if not backend.index_exists(name):
        settings, mappings = body
        backend.create_index(name, settings=settings, mappings=mappings)
        backend.health(index=name, wait_for_status="yellow", timeout_s=60)
        meta: dict[str, Any] = mappings["_meta"]
        return meta, True
    existing = backend.get_mapping(name).meta
    if existing.get("fingerprint", {}).get("corpus") != dataset.fingerprint.corpus:
        raise VerificationError(
            f"index {name} records corpus fingerprint {existing.get('fingerprint', {}).get('corpus')}, "
            f"but the data has {dataset.fingerprint.corpus}: refusing to mix corpora"
        )
    return existing, False


def _add_vector_fields(
    backend: Backend,
    layout: _Layout,
    embedders: Sequence[CachedEmbedder],
    vectors: dict[str, dict[str, Any]],
    dims: dict[str, int],
    options: IndexOptions,
    meta: dict[str, Any],
) -> None:
    """Vector fields for models the index lacks (the text side untouched), recorded in ``meta``."""
    props = backend.get_mapping(layout.name).properties
    new_fields = {f: mapping for f, mapping in vectors.items() if f not in props}
    if new_fields:
        backend.put_mapping(layout.name, properties=new_fields)
    for emb, field_name in zip(embedders, layout.fields, strict=True):
        spec = emb.spec
        record = {
            "model_id": spec.model_id,
            "revision": spec.revision,
            "dims": dims[field_name],
            "document_prompt": spec.document_prompt,
            "query_prompt": spec.query_prompt,
            "backend": spec.backend,
            "precision": spec.precision,
            "index_options": vector_options_record(options.vector),
        }
        if spec.chosen_by:
            record["chosen_by"] = spec.chosen_by
        meta["models"].setdefault(field_name, record)


def _finish(
    backend: Backend,
    layout: _Layout,
    dataset: Dataset,
    fields: list[str],
    meta: dict[str, Any],
    replicas: int | None,
    console: Console,
) -> str:
    """Serving settings (``replicas`` None: the index's own left alone), verification, then the alias:
    published only when verified. Returns the mapping hash."""
    name, alias = layout.name, layout.alias
    meta["status"] = "loaded"
    meta["mapping_hash"] = mapping_hash(backend.get_mapping(name).properties)
    backend.put_mapping(name, meta=meta)
    if replicas is not None:
        backend.put_settings(name, {"index": serving_settings(replicas, layout.refresh_interval)})
    _expunge_deletes(backend, name, console)
    verify(backend, name, dataset, fields)
    meta["status"] = "published"
    meta["published"] = datetime.now(UTC).isoformat()
    backend.put_mapping(name, meta=meta)
    publish(backend, alias, name)
    return str(meta["mapping_hash"])


#: how long to wait for the engine to release replaced documents (it moves its retention leases every 30 s,
#: from the index's creation on; the interval, index.soft_deletes.retention_lease.sync_interval, is refused as
#: an unknown setting by Elasticsearch 9.5.4 and OpenSearch 3.5.0: only their test builds register it)
RELEASE_WAIT_S = 90.0


def _expunge_deletes(backend: Backend, name: str, console: Console) -> int:
    """Merge away documents that a resume or a new model's vectors replaced: until merged they still count
    in BM25's document frequencies, so the same index would rank differently from a fresh build, and
    differently again whenever Lucene happens to merge. Returns how many are left (0, or a warning)."""
    backend.refresh(name)
    (stats,) = backend.list_indices(name)
    if not stats.deleted:
        return 0
    console.print(
        f"{name}: {stats.deleted} replaced documents still count in BM25's statistics; waiting for the engine "
        "to release them (up to 30 s), then merging them away",
        highlight=False,
    )
    deadline = time.monotonic() + RELEASE_WAIT_S
    while not backend.replaced_docs_releasable(name) and time.monotonic() < deadline:
        time.sleep(1.0)  # polls a condition the engine reports; the flush inside moves it along
    backend.put_settings(name, {"index": {"merge.policy.expunge_deletes_allowed": 0}})  # default: >10% only
    backend.force_merge(name, expunge_deletes=True)
    backend.put_settings(name, {"index": {"merge.policy.expunge_deletes_allowed": None}})
    backend.refresh(name)
    (stats,) = backend.list_indices(name)
    if stats.deleted:
        console.print(
            f"warning: {name} still holds {stats.deleted} replaced documents after the merge; lexical scores "
            "may differ slightly from a fresh build until the engine merges them",
            style="yellow",
            highlight=False,
        )
    return stats.deleted


def _plan_layout(
    backend: Backend,
    dataset: Dataset,
    embedders: Sequence[CachedEmbedder],
    options: IndexOptions,
    caps: Capabilities,
) -> _Layout:
    """The index the dataset goes to; with a user mapping, its vector field checked against the
    engine's dialect and the model (a ConfigError naming the JSON path; nothing is created)."""
    user = options.mapping
    # vectors of other numerics than the reference get an index of their own, beside the reference's
    numerics = [e.spec.numerics for e in embedders if not e.spec.is_reference_numerics]
    if user is None:
        analysis = choose_analysis(caps, options.analysis)
        name = index_name(dataset.name, dataset.fingerprint.corpus, analysis, numerics)
        alias = alias_for(dataset.name)
        if not embedders:
            name = _text_only(backend, alias, name)
        return _Layout(name, alias, analysis, [e.spec.field_name for e in embedders])
    if len(embedders) > 1:
        raise ConfigError(
            f"--mapping {user.source} holds one model's vectors (its vector field), found "
            f"{len(embedders)} models: {', '.join(e.spec.model_id for e in embedders)}"
        )
    fields = [user.vector_field(e.spec.field_name) for e in embedders]
    for emb, f in zip(embedders, fields, strict=True):
        check_vector_field(backend, user, f, emb.spec.dims or emb.encoder.dims, emb.spec.model_id)
    name = user.index_name(dataset.name, dataset.fingerprint.corpus) + numerics_suffix(numerics)
    alias = user.alias(dataset.name)
    return _Layout(
        _text_only(backend, alias, name) if not embedders else name, alias, user.label, fields, user
    )


def _text_only(backend: Backend, alias: str, name: str) -> str:
    """Where a build without vectors (a lexical run) goes: the reference-named index ``name`` when it exists,
    else the one the alias publishes when it is ``name`` with other numerics' vectors (same corpus, same
    text side), so a lexical run after a vector run of other numerics does not build the text side again."""
    if backend.index_exists(name):
        return name
    published = backend.alias_targets(alias)
    return next((t for t in published if t.startswith(f"{name}-")), name)


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
    dialect: no k-NN plugin, a native k-NN engine) is checked before anything is created.
    """
    options = options or IndexOptions()
    console = console or Console(stderr=True)
    caps = caps or backend.probe()
    started = time.perf_counter()
    layout = _plan_layout(backend, dataset, embedders, options, caps)
    name, alias, analysis = layout.name, layout.alias, layout.analysis
    dims = {f: emb.spec.dims or emb.encoder.dims for emb, f in zip(embedders, layout.fields, strict=True)}
    vectors = (
        {f: backend.vector_mapping(vector_spec(d, options.vector)) for f, d in dims.items()}
        if layout.mapping is None
        else {}  # the user's mapping holds its vector field (checked by _plan_layout)
    )
    replicas = options.replicas if options.replicas is not None else layout.default_replicas(caps)
    meta = _new_meta(dataset, layout, caps, replicas)
    meta, created = _open_index(backend, name, dataset, _creation_body(layout, options, meta, vectors))
    if not created:
        _check_vector_conflicts(backend, name, embedders, layout.fields, dims)
        replicas = options.replicas if options.replicas is not None else int(meta.get("replicas", replicas))
    _add_vector_fields(backend, layout, embedders, vectors, dims, options, meta)

    summary = IndexSummary(
        alias=alias,
        index=name,
        dataset=dataset.name,
        docs=dataset.corpus_size,
        seconds=0.0,
        created=created,
        analysis=analysis,
    )
    summary.models = {f: m["model_id"] for f, m in meta["models"].items()}
    fields = layout.fields
    with phase("verify"):  # what an existing index already holds
        present = {} if created else layout.existing(backend, dataset)
    complete = sum(1 for have in present.values() if all(f in have for f in fields))
    if complete == dataset.corpus_size and len(present) == dataset.corpus_size:
        summary.skipped = complete
    else:
        summary.retries = _load(
            backend, layout, dataset, embedders, present, options, console, summary
        ).retries
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
        summary.mapping_hash = _finish(
            backend, layout, dataset, fields, meta, None if untouched else replicas, console
        )
    summary.published = True
    summary.seconds = time.perf_counter() - started
    return summary


def _load(
    backend: Backend,
    layout: _Layout,
    dataset: Dataset,
    embedders: Sequence[CachedEmbedder],
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
        *((Stage(EMBED, "embedded", n * len(embedders)),) if embedders else ()),
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
            (window, _embed_window(window, embedders, layout.fields, present, options.batch_size, bar))
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
    embedders: Sequence[CachedEmbedder],
    fields: Sequence[str],
    present: dict[str, set[str]],
    batch_size: int | None,
    bar: Tracker,
) -> dict[str, dict[str, list[float]]]:
    """The vectors each document of ``window`` still lacks, by id then field (counted as embedded as
    they come, and so are those a document already has)."""
    vectors: dict[str, dict[str, list[float]]] = {d.id: {} for d in window}
    for emb, f in zip(embedders, fields, strict=True):
        pairs = [(d.id, document_text(d.title, d.text)) for d in window if f not in present.get(d.id, ())]
        bar.count(EMBED, len(window) - len(pairs))
        with bar.busy(EMBED):
            for ids, vecs in emb.embed_documents(
                pairs, batch_size=batch_size, on_progress=lambda k: bar.count(EMBED, k)
            ):
                for doc_id, vec in zip(ids, vecs, strict=True):
                    vectors[doc_id][f] = vec.tolist()
    return vectors


def _send_window(
    loader: BulkLoader,
    layout: _Layout,
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


def verify(backend: Backend, index: str, dataset: Dataset, vector_fields: Sequence[str]) -> None:
    """Raise VerificationError unless the index holds exactly the dataset's corpus."""
    backend.refresh(index)
    count = backend.count(index)
    problems = []
    if count != dataset.corpus_size:
        problems.append(f"document count {count} != corpus size {dataset.corpus_size}")
    for f in vector_fields:
        n = backend.count(index, {"exists": {"field": f}})
        if n != dataset.corpus_size:
            problems.append(f"{n} documents have vectors in {f}, expected {dataset.corpus_size}")
    meta = backend.get_mapping(index).meta
    if meta.get("fingerprint", {}).get("corpus") != dataset.fingerprint.corpus:
        problems.append(
            f"recorded corpus fingerprint {meta.get('fingerprint', {}).get('corpus')} != data {dataset.fingerprint.corpus}"
        )
    if problems:
        raise VerificationError(
            f"index {index} failed verification and was not published: " + "; ".join(problems)
        )


def publish(backend: Backend, alias: str, index: str) -> None:
    """Point ``alias`` at ``index`` alone, atomically."""
    backend.point_alias(alias, index)


def resolve_alias(backend: Backend, dataset_name: str) -> tuple[str, dict[str, Any]] | None:
    """(physical index, its _meta) behind the dataset's alias, or None."""
    targets = backend.alias_targets(alias_for(dataset_name))
    if not targets:
        return None
    return targets[0], backend.get_mapping(targets[0]).meta
