"""Index building against the real engine: mapping, verification, resume, second model, conflicts."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from indexer import MappingConflictError, VerificationError, probe
from indexer._build import IndexOptions, build_index, resolve_alias, verify
from indexer._layout import alias_for, choose_analysis
from indexer.data import Dataset, Document, load_dataset
from indexer.embed import (
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    bundled_model_path,
    resolve_model,
)
from tests._support import scifact_subset

OPTS = IndexOptions(progress=False, max_chunk_bytes=256 * 1024)


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    folder = scifact_subset(tmp_path_factory.mktemp("data") / "build-subset", n_docs=300)
    return load_dataset(str(folder))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> EmbeddingCache:
    return EmbeddingCache(tmp_path_factory.mktemp("embcache"))


def _drop(client: Elasticsearch, pattern: str) -> None:
    # by name: clusters may refuse wildcard deletes (action.destructive_requires_name)
    for name in client.indices.get(index=pattern, allow_no_indices=True, ignore_unavailable=True).body:
        client.indices.delete(index=name)


@pytest.fixture()
def clean(es_client: Elasticsearch, subset: Dataset) -> Iterator[None]:
    _drop(es_client, f"{alias_for(subset.name)}*")
    yield
    _drop(es_client, f"{alias_for(subset.name)}*")


def minilm(cache: EmbeddingCache) -> CachedEmbedder:
    return CachedEmbedder(Encoder(resolve_model("minilm")), cache)


def test_build_mapping_verify_and_rerun(
    es_client: Elasticsearch, subset: Dataset, cache: EmbeddingCache, clean: None
) -> None:
    emb = minilm(cache)
    first = build_index(es_client, subset, [emb], OPTS)
    assert first.created and first.published and first.indexed == 300
    index, meta = resolve_alias(es_client, subset.name) or ("", {})
    assert index == first.index
    mapping = es_client.indices.get_mapping(index=index)[index]["mappings"]
    props = mapping["properties"]
    field = emb.spec.field_name
    assert props[field]["type"] == "dense_vector" and props[field]["dims"] == 384
    assert props[field]["similarity"] == "dot_product"
    assert props[field]["index_options"]["type"] == "hnsw"
    assert {"id", "title", "text", "title_text"} <= set(props)
    assert props["text"]["fields"]["r2med"]["similarity"] == "bm25_r2med"
    settings = es_client.indices.get_settings(index=index)[index]["settings"]["index"]
    assert settings["similarity"]["bm25_r2med"] == {"type": "BM25", "k1": "0.9", "b": "0.4"}
    assert settings["refresh_interval"] == "1s", "loading-time settings must be restored"
    assert meta["analysis"] == choose_analysis(probe(es_client))
    assert meta["fingerprint"]["corpus"] == subset.fingerprint.corpus
    assert meta["status"] == "published"
    assert es_client.count(index=alias_for(subset.name))["count"] == 300

    again = CachedEmbedder(Encoder(resolve_model("minilm")), cache)
    second = build_index(es_client, subset, [again], OPTS)
    assert not second.created and second.indexed == 0 and second.updated == 0 and second.skipped == 300
    assert again.stats.model_calls == 0 and again.encoder.loaded is False


class Boom(RuntimeError):
    pass


def _crashing(ds: Dataset, after: int) -> Dataset:
    def corpus() -> Iterator[Document]:
        for i, doc in enumerate(ds.iter_corpus()):
            if i == after:
                raise Boom(f"simulated crash after {after} documents")
            yield doc

    return dataclasses.replace(ds, _corpus=corpus)


def test_resume_after_interrupted_load(
    es_client: Elasticsearch, subset: Dataset, cache: EmbeddingCache, clean: None
) -> None:
    # windows of 100 documents: a crash at document 150 leaves the first window loaded
    small = _crashing(subset, 150)
    with pytest.raises(Boom):
        build_index(es_client, small, [minilm(cache)], dataclasses.replace(OPTS, window=100))
    assert resolve_alias(es_client, subset.name) is None, "a partial index must never be published"
    resumed = build_index(es_client, subset, [minilm(cache)], OPTS)
    assert resumed.published
    assert 0 < resumed.skipped <= 100, "documents loaded before the crash are not sent again"
    assert resumed.indexed + resumed.skipped == 300
    assert es_client.count(index=resumed.index)["count"] == 300


def test_second_model_adds_only_vectors(
    es_client: Elasticsearch, subset: Dataset, cache: EmbeddingCache, clean: None, tmp_path: Path
) -> None:
    first = build_index(es_client, subset, [minilm(cache)], OPTS)
    copy = tmp_path / "minilm-copy"
    shutil.copytree(bundled_model_path(), copy)
    other = CachedEmbedder(Encoder(resolve_model(str(copy))), cache)
    assert other.spec.field_name != minilm(cache).spec.field_name
    second = build_index(es_client, subset, [other], OPTS)
    assert second.index == first.index, "adding a model must not rebuild the index"
    assert second.indexed == 0 and second.updated == 300
    meta = resolve_alias(es_client, subset.name)
    assert meta is not None and set(meta[1]["models"]) == {
        minilm(cache).spec.field_name,
        other.spec.field_name,
    }
    assert (
        es_client.count(index=first.index, query={"exists": {"field": other.spec.field_name}})["count"] == 300
    )


def test_publish_rejected_when_count_short(es_client: Elasticsearch, subset: Dataset, clean: None) -> None:
    built = build_index(es_client, subset, [], OPTS)
    some_id = next(subset.iter_corpus()).id
    es_client.delete(index=built.index, id=some_id, refresh=True)
    with pytest.raises(VerificationError, match=r"document count 299 != corpus size 300"):
        verify(es_client, built.index, subset, [])


def test_dimension_conflict_is_clear(
    es_client: Elasticsearch, subset: Dataset, cache: EmbeddingCache, clean: None
) -> None:
    good = minilm(cache)
    build_index(es_client, subset, [good], OPTS)
    wrong = ModelSpec(
        model_id="example/other-768",
        path_or_name="unused",
        revision="x",
        dims=768,
        field_name=good.spec.field_name,
    )
    with pytest.raises(
        MappingConflictError, match=r"holds 384-dimensional vectors, but model example/other-768 produces 768"
    ):
        build_index(es_client, subset, [CachedEmbedder(Encoder(wrong), cache)], OPTS)


def test_changed_corpus_gets_a_new_index(
    es_client: Elasticsearch, tmp_path: Path, clean: None, subset: Dataset
) -> None:
    folder = scifact_subset(tmp_path / "build-subset", n_docs=300)
    first = build_index(es_client, load_dataset(str(folder)), [], OPTS)
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"_id": "new-doc", "title": "t", "text": "a brand new abstract"}\n')
    changed = load_dataset(str(folder))
    second = build_index(es_client, changed, [], OPTS)
    assert second.index != first.index
    assert es_client.count(index=first.index)["count"] == 300
    assert es_client.count(index=alias_for(changed.name))["count"] == 301
