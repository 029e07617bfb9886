"""Where a build puts the corpus (the physical index, its alias, the analysis chain, each model's vector field;
the harness's mapping or the user's) and how it opens that index: created with its ``_meta`` in one request,
or the existing one read and held to the data's fingerprint."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from base import ConfigError, VerificationError
from indexer._build_options import IndexOptions
from indexer._layout import (
    BM25_PARAMS,
    MAPPING_VERSION,
    alias_for,
    choose_analysis,
    index_name,
    numerics_suffix,
    text_side,
    vector_options_record,
)
from indexer._present import existing_by_ids, existing_docs
from indexer._user_mapping import UserMapping, check_vector_field
from indexer.backends import Backend, Capabilities
from indexer.data import Dataset, Document
from indexer.embed import CachedEmbedder


@dataclass(frozen=True, slots=True)
class Layout:
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


def new_meta(dataset: Dataset, layout: Layout, caps: Capabilities, replicas: int) -> dict[str, Any]:
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


def creation_body(
    layout: Layout, options: IndexOptions, meta: dict[str, Any], vectors: dict[str, dict[str, Any]]
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


def open_index(
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


def add_vector_fields(
    backend: Backend,
    layout: Layout,
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


def plan_layout(
    backend: Backend,
    dataset: Dataset,
    embedders: Sequence[CachedEmbedder],
    options: IndexOptions,
    caps: Capabilities,
) -> Layout:
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
            name = text_only(backend, alias, name)
        return Layout(name, alias, analysis, [e.spec.field_name for e in embedders])
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
    return Layout(text_only(backend, alias, name) if not embedders else name, alias, user.label, fields, user)


def text_only(backend: Backend, alias: str, name: str) -> str:
    """Where a build without vectors (a lexical run) goes: the reference-named index ``name`` when it exists,
    else the one the alias publishes when it is ``name`` with other numerics' vectors (same corpus, same
    text side), so a lexical run after a vector run of other numerics does not build the text side again."""
    if backend.index_exists(name):
        return name
    published = backend.alias_targets(alias)
    return next((t for t in published if t.startswith(f"{name}-")), name)
