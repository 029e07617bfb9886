"""Index building against both real engines: mapping, verification, resume, second model, conflicts.

Every test runs on Elasticsearch and on OpenSearch (the ``backend`` fixture); the embedding
cache is the default one, so the corpus is embedded at most once for both engines and the session.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from base import CapabilityMissing, ConfigError, MappingConflictError, VerificationError
from indexer import Backend, IndexOptions, VectorOptions, VectorSpec, build_index, choose_analysis
from indexer._build import resolve_alias, verify
from indexer._layout import alias_for, index_name
from indexer.data import Dataset, Document, load_dataset
from indexer.embed import (
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    bundled_model_path,
    resolve_model,
)
from tests._support import drop_indices, ndjson, own_cache, record_auto_choice, scifact_subset

OPTS = IndexOptions(progress=False, max_chunk_bytes=256 * 1024)


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    folder = scifact_subset(tmp_path_factory.mktemp("data") / "build-subset", n_docs=300)
    return load_dataset(str(folder))


@pytest.fixture(scope="module")
def cache() -> Iterator[EmbeddingCache]:
    """The default embedding cache, the one `harness index` and `harness run` use: the session's other
    300-document SciFact cuts hold these abstracts, so they are not embedded again (cold: ~30 s of CPU)."""
    with EmbeddingCache() as shared:
        yield shared


@pytest.fixture()
def clean(backend: Backend, subset: Dataset) -> Iterator[Backend]:
    drop_indices(backend, f"{alias_for(subset.name)}*")
    yield backend
    drop_indices(backend, f"{alias_for(subset.name)}*")


def minilm(cache: EmbeddingCache) -> CachedEmbedder:
    return CachedEmbedder(Encoder(resolve_model("minilm")), cache)


def test_build_mapping_verify_and_rerun(clean: Backend, subset: Dataset, cache: EmbeddingCache) -> None:
    backend = clean
    emb = minilm(cache)
    first = build_index(backend, subset, [emb], OPTS)
    assert first.created and first.published and first.indexed == 300
    index, meta = resolve_alias(backend, subset.name) or ("", {})
    assert index == first.index
    props = backend.get_mapping(index).properties
    field = emb.spec.field_name
    if backend.product == "elasticsearch":
        assert props[field]["type"] == "dense_vector" and props[field]["dims"] == 384
        assert props[field]["similarity"] == "dot_product"
        assert props[field]["index_options"]["type"] == "hnsw"
    else:  # the OpenSearch dialect: knn_vector on the Lucene engine, cosine space (unit vectors)
        assert props[field]["type"] == "knn_vector" and props[field]["dimension"] == 384
        assert props[field]["method"]["engine"] == "lucene"
        assert props[field]["method"]["space_type"] == "cosinesimil"
    assert backend.vector_dims(props[field]) == 384
    assert {"id", "title", "text", "title_text"} <= set(props)
    assert props["text"]["fields"]["r2med"]["similarity"] == "bm25_r2med"
    settings = backend.get_settings(index)["index"]
    assert settings["similarity"]["bm25_r2med"] == {"type": "BM25", "k1": "0.9", "b": "0.4"}
    assert settings["refresh_interval"] == "1s", "loading-time settings must be restored"
    assert meta["analysis"] == first.analysis == choose_analysis(backend.probe())
    assert meta["engine"]["product"] == backend.product
    assert meta["fingerprint"]["corpus"] == subset.fingerprint.corpus
    assert meta["status"] == "published"
    assert backend.count(alias_for(subset.name)) == 300

    again = CachedEmbedder(Encoder(resolve_model("minilm")), cache)
    second = build_index(backend, subset, [again], OPTS)
    assert not second.created and second.indexed == 0 and second.updated == 0 and second.skipped == 300
    assert again.stats.model_calls == 0 and again.encoder.loaded is False


def test_a_rerun_keeps_the_operators_serving_settings(clean: Backend, subset: Dataset) -> None:
    """`harness run` rebuilds nothing on a published index, and must not reset what an operator set."""
    backend = clean
    first = build_index(backend, subset, [], OPTS)
    backend.put_settings(first.index, {"index": {"number_of_replicas": 2}})
    again = build_index(backend, subset, [], OPTS)
    assert again.skipped == 300 and again.published
    assert backend.get_settings(first.index)["index"]["number_of_replicas"] == "2"
    asked = build_index(backend, subset, [], dataclasses.replace(OPTS, replicas=0))  # unless told to
    assert asked.skipped == 300
    assert backend.get_settings(first.index)["index"]["number_of_replicas"] == "0"


class Boom(RuntimeError):
    pass


def _crashing(ds: Dataset, after: int) -> Dataset:
    def corpus() -> Iterator[Document]:
        for i, doc in enumerate(ds.iter_corpus()):
            if i == after:
                raise Boom(f"simulated crash after {after} documents")
            yield doc

    return dataclasses.replace(ds, _corpus=corpus)


def test_resume_after_interrupted_load(clean: Backend, subset: Dataset, cache: EmbeddingCache) -> None:
    backend = clean
    # windows of 100 documents: a crash at document 150 leaves the first window loaded
    small = _crashing(subset, 150)
    with pytest.raises(Boom):
        build_index(backend, small, [minilm(cache)], dataclasses.replace(OPTS, window=100))
    assert resolve_alias(backend, subset.name) is None, "a partial index must never be published"
    resumed = build_index(backend, subset, [minilm(cache)], OPTS)
    assert resumed.published
    assert 0 < resumed.skipped <= 100, "documents loaded before the crash are not sent again"
    assert resumed.indexed + resumed.skipped == 300
    assert backend.count(resumed.index) == 300
    assert backend.get_settings(resumed.index)["index"]["refresh_interval"] == "1s", (
        "loading settings restored"
    )


def _bm25_scores(backend: Backend, index: str, subset: Dataset) -> dict[str, list[tuple[str, float]]]:
    queries = list(subset.queries.items())[:10]
    bodies = [{"query": {"match": {"title_text": text}}, "size": 10, "_source": False} for _, text in queries]
    answers = backend.msearch(index, bodies, timeout_s=30)
    return {
        qid: [(h.id, h.score or 0.0) for h in a.hits] for (qid, _), a in zip(queries, answers, strict=True)
    }


def _no_replaced_documents(backend: Backend, index: str) -> None:
    (stats,) = backend.list_indices(index)
    assert stats.deleted == 0 and stats.docs == 300


def test_vectors_added_later_leave_bm25_as_a_fresh_build_would(
    clean: Backend, subset: Dataset, cache: EmbeddingCache, tmp_path: Path
) -> None:
    """Adding a model's vectors replaces every document; the replaced copies count in BM25's statistics
    until merged away, so without the expunge the same data ranks differently (and drifts with merges).

    One index per engine takes a first model's vectors, then a second model's beside them (neither rebuilds
    the index): the first addition pays the wait for the engine to release the replaced copies (its
    retention leases move every 30 s, only from the index's creation on); the second replaces documents
    written before that move, so the engine drops them at once. Then a fresh build of both models must rank
    by BM25 exactly as the twice-extended index does."""
    backend = clean
    first = build_index(backend, subset, [], OPTS)
    later = build_index(backend, subset, [minilm(cache)], OPTS)
    assert later.index == first.index, "adding a model must not rebuild the index"
    assert later.indexed == 0 and later.updated == 300
    _no_replaced_documents(backend, later.index)
    after_first = _bm25_scores(backend, later.index, subset)

    copy = tmp_path / "minilm-copy"
    shutil.copytree(bundled_model_path(), copy)
    other = CachedEmbedder(Encoder(resolve_model(str(copy))), cache)
    assert other.spec.field_name != minilm(cache).spec.field_name
    second = build_index(backend, subset, [other], OPTS)
    assert second.index == first.index, "adding a model must not rebuild the index"
    assert second.indexed == 0 and second.updated == 300
    meta = resolve_alias(backend, subset.name)
    assert meta is not None and set(meta[1]["models"]) == {
        minilm(cache).spec.field_name,
        other.spec.field_name,
    }
    assert backend.count(first.index, {"exists": {"field": other.spec.field_name}}) == 300
    assert backend.count(first.index, {"exists": {"field": minilm(cache).spec.field_name}}) == 300
    _no_replaced_documents(backend, second.index)
    after_second = _bm25_scores(backend, second.index, subset)
    assert after_second == after_first

    backend.delete_index(second.index)
    fresh = build_index(backend, subset, [minilm(cache), other], OPTS)
    assert fresh.index == second.index and fresh.indexed == 300
    assert _bm25_scores(backend, fresh.index, subset) == after_second


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    folder = scifact_subset(
        tmp_path_factory.mktemp("data") / "numerics-subset", n_docs=40, n_test=5, n_train=5
    )
    return load_dataset(str(folder))


def test_vectors_of_other_numerics_get_an_index_of_their_own(
    backend: Backend, small: Dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: a torch fp32 index keeps its name; vectors of other numerics (here a changed default:
    auto choosing int8) build an index beside it instead of being refused, and neither reuses the other."""
    drop_indices(backend, f"{alias_for(small.name)}*")
    cache = EmbeddingCache(tmp_path / "vectors")  # holding the reference's vectors only, to start with
    reference = build_index(backend, small, [minilm(cache)], OPTS)
    assert reference.index == index_name(small.name, small.fingerprint.corpus, reference.analysis)
    own_cache(monkeypatch, tmp_path / "cache")
    record_auto_choice(resolve_model("minilm"), "onnx-int8", "int8")
    int8 = CachedEmbedder(Encoder(resolve_model("minilm"), backend="auto"), cache)
    other = build_index(backend, small, [int8], OPTS)
    assert other.index == f"{reference.index}-onnx-int8-int8"
    n = small.corpus_size
    assert other.created and other.indexed == n
    assert int8.stats.cache_hits == 0 and int8.stats.texts_encoded == n  # none of the reference's vectors
    field = int8.spec.field_name
    for summary, numerics in ((reference, ("torch", "fp32")), (other, ("onnx-int8", "int8"))):
        meta = backend.get_mapping(summary.index).meta["models"][field]
        assert (meta["backend"], meta["precision"]) == numerics
        assert backend.count(summary.index, {"exists": {"field": field}}) == n
    chosen = backend.get_mapping(other.index).meta["models"][field]["chosen_by"]
    assert chosen.startswith("auto: onnx-int8/int8 on ") and "recorded by the test" in chosen
    assert "chosen_by" not in backend.get_mapping(reference.index).meta["models"][field]
    # the reference index, built again, is found complete: nothing is embedded or sent
    again = build_index(backend, small, [minilm(cache)], OPTS)
    assert again.index == reference.index and not again.created and again.skipped == n
    assert again.cache_hits == again.cache_misses == 0
    assert resolve_alias(backend, small.name) == (again.index, backend.get_mapping(again.index).meta)
    # an index from before numerics had names of their own, holding int8 vectors under the reference name
    meta = backend.get_mapping(reference.index).meta
    meta["models"][field].update(backend="onnx-int8", precision="int8")
    backend.put_mapping(reference.index, meta=meta)
    with pytest.raises(
        MappingConflictError, match=r"built before they had\); use --embed-backend onnx-int8/int8"
    ):
        build_index(backend, small, [minilm(cache)], OPTS)
    # without the reference's index, a lexical build takes the published one of other numerics (same text)
    backend.delete_index(reference.index)
    assert build_index(backend, small, [int8], OPTS).index == other.index  # publishes it again
    lexical = build_index(backend, small, [], OPTS)
    assert lexical.index == other.index and not lexical.created and lexical.skipped == n
    cache.close()
    drop_indices(backend, f"{alias_for(small.name)}*")


def test_publish_rejected_when_count_short(clean: Backend, subset: Dataset) -> None:
    backend = clean
    built = build_index(backend, subset, [], OPTS)
    some_id = next(subset.iter_corpus()).id
    assert not backend.bulk(ndjson([{"delete": {"_index": built.index, "_id": some_id}}])).failed
    with pytest.raises(VerificationError, match=r"document count 299 != corpus size 300"):
        verify(backend, built.index, subset, [])


def test_dimension_conflict_is_clear(clean: Backend, subset: Dataset, cache: EmbeddingCache) -> None:
    backend = clean
    good = minilm(cache)
    build_index(backend, subset, [good], OPTS)
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
        build_index(backend, subset, [CachedEmbedder(Encoder(wrong), cache)], OPTS)


def test_changed_corpus_gets_a_new_index(clean: Backend, tmp_path: Path, subset: Dataset) -> None:
    backend = clean
    folder = scifact_subset(tmp_path / "build-subset", n_docs=300)
    first = build_index(backend, load_dataset(str(folder)), [], OPTS)
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"_id": "new-doc", "title": "t", "text": "a brand new abstract"}\n')
    changed = load_dataset(str(folder))
    second = build_index(backend, changed, [], OPTS)
    assert second.index != first.index
    assert backend.count(first.index) == 300
    assert backend.count(alias_for(changed.name)) == 301


def test_a_field_of_another_type_is_a_named_conflict_and_nothing_is_published(
    clean: Backend, subset: Dataset, cache: EmbeddingCache
) -> None:
    """The physical index exists (another tool, an older layout) with the model's field name taken by a
    keyword field: the conflict names the field and both types; no vector, no alias, no document."""
    backend = clean
    emb = minilm(cache)
    analysis = choose_analysis(backend.probe())
    name = index_name(subset.name, subset.fingerprint.corpus, analysis)
    meta = {"harness": "r2med-harness", "fingerprint": {"corpus": subset.fingerprint.corpus}, "models": {}}
    backend.create_index(
        name,
        settings={},
        mappings={
            "_meta": meta,
            "properties": {"id": {"type": "keyword"}, emb.spec.field_name: {"type": "keyword"}},
        },
    )
    with pytest.raises(MappingConflictError) as err:
        build_index(backend, subset, [emb], OPTS)
    message = str(err.value)
    assert f"mapping conflict on index {name}, field {emb.spec.field_name}" in message
    assert "'keyword'" in message and f"not as a {backend.product} vector field" in message
    assert resolve_alias(backend, subset.name) is None and backend.count(name) == 0
    assert backend.get_mapping(name).properties[emb.spec.field_name] == {"type": "keyword"}


def test_analysis_chain_by_name_is_its_own_index(clean: Backend, subset: Dataset) -> None:
    """--analysis picks the chain on either engine; each chain is its own physical index (layout hash)."""
    backend = clean
    built = {
        chain: build_index(backend, subset, [], dataclasses.replace(OPTS, analysis=chain))
        for chain in ("standard", "hunspell")
    }
    assert built["standard"].index != built["hunspell"].index
    for chain, summary in built.items():
        assert summary.analysis == chain and backend.get_mapping(summary.index).meta["analysis"] == chain
    assert resolve_alias(backend, subset.name) == (
        built["hunspell"].index,
        backend.get_mapping(built["hunspell"].index).meta,
    ), "the alias follows the last build"
    with pytest.raises(
        ConfigError, match=r"expected --analysis in \['english', 'hunspell', 'standard'\], found 'klingon'"
    ):
        IndexOptions(analysis="klingon")


def test_knn_engine_choice_follows_the_dialect(
    clean: Backend, subset: Dataset, cache: EmbeddingCache
) -> None:
    """faiss is refused with the reason on an OpenSearch node without the k-NN plugin's native libraries (the
    managed node); Elasticsearch takes no engine at all. Nothing is created either way."""
    backend = clean
    faiss = dataclasses.replace(OPTS, vector=VectorOptions(engine="faiss"))
    expected = (
        r"cannot build a knn_vector field on the faiss engine: .* has no native libraries"
        if backend.product == "opensearch"
        else (r"Elasticsearch has no k-NN engine choice")
    )
    with pytest.raises((ConfigError, CapabilityMissing), match=expected):
        build_index(backend, subset, [minilm(cache)], faiss)
    assert backend.list_indices(f"{alias_for(subset.name)}*") == []


def test_loading_shows_the_embedding_it_waits_on_and_times_its_phases(
    backend: Backend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: the count was of bulk-acknowledged documents only; the embedding that bounds a cold
    load is what the progress line shows (with its rate), and the load reports its timing phases."""
    ds = load_dataset(str(scifact_subset(tmp_path / "progress-subset", n_docs=60, n_test=10, n_train=5)))
    drop_indices(backend, f"{alias_for(ds.name)}*")
    log = tmp_path / "timing.jsonl"
    monkeypatch.setenv("R2MED_TIMING_LOG", str(log))  # as users set it (docs/run-directory.md)
    out = io.StringIO()
    cold = CachedEmbedder(Encoder(resolve_model("minilm")), EmbeddingCache(tmp_path / "cold-cache"))
    options = dataclasses.replace(OPTS, progress=True)
    build_index(backend, ds, [cold], options, console=Console(file=out, force_terminal=False, width=100))
    drop_indices(backend, f"{alias_for(ds.name)}*")
    n = ds.corpus_size
    last = out.getvalue().splitlines()[-1]
    assert re.fullmatch(
        rf"indexing {ds.name}: {n}/{n} docs embedded \(100%\), [\d.]+ docs/s, {n} indexed, 0:\d\d elapsed",
        last,
    ), last
    phases = [json.loads(line)["phase"] for line in log.read_text().splitlines()]
    assert {"model load", "embed", "bulk"} <= set(phases), phases


@pytest.mark.parametrize("numerics", ["torch/fp32", "openvino/fp32", "onnx-int8/int8"])
def test_a_field_of_another_size_behind_the_alias_is_refused_whatever_the_numerics(
    backend: Backend, small: Dataset, numerics: str
) -> None:
    """Issue 28: CI failed on a fresh AVX-512 machine. `auto` chose openvino fp32 there, the build went to an
    index of its own name (``...-openvino-fp32``), so nothing compared MiniLM's 384 dimensions with the
    768-dimensional field the published index holds, and the alias moved. Where `auto` chose torch fp32 the
    same command was refused. Each numerics auto may choose (the reference and two others) is refused alike,
    before anything is created, and the alias stays where it was."""
    drop_indices(backend, f"{alias_for(small.name)}*")
    text_only = build_index(backend, small, [], OPTS)
    field = resolve_model("minilm").field_name
    backend.put_mapping(
        text_only.index, properties={field: backend.vector_mapping(VectorSpec(dims=768, similarity="cosine"))}
    )
    before = sorted(i.name for i in backend.list_indices(f"{alias_for(small.name)}*"))
    embedder = CachedEmbedder(Encoder(resolve_model("minilm"), backend=numerics), None)
    with pytest.raises(
        MappingConflictError, match=r"holds 768-dimensional vectors, but model .* produces 384"
    ):
        build_index(backend, small, [embedder], OPTS)
    assert sorted(i.name for i in backend.list_indices(f"{alias_for(small.name)}*")) == before
    assert backend.alias_targets(alias_for(small.name)) == [text_only.index]
    encoder = embedder.encoder
    assert isinstance(encoder, Encoder) and not encoder.loaded  # refused before any model ran
    drop_indices(backend, f"{alias_for(small.name)}*")
