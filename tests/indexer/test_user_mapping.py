"""A user's own mapping for a benchmark corpus (``--mapping``), on both real engines.

The mapping uses other field names (``headline``, ``body``, ``emb``), its own analyzer (built-in
tokenizer and filters only: the stripped Elasticsearch has no analysis-common) and its own BM25
similarity. Each bad input is an error naming the file and the JSON path, and nothing is created.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from base import ConfigError
from indexer import Backend, IndexOptions, UserMapping, build_index, load_user_mapping
from indexer._build import resolve_alias
from indexer.data import Dataset, load_dataset
from indexer.embed import CachedEmbedder, EmbeddingCache, Encoder, resolve_model
from tests._mappings import FIELDS
from tests._mappings import team_body as user_body
from tests._support import drop_indices, scifact_subset

N_DOCS = 150


def write(path: Path, body: dict[str, Any]) -> Path:
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    folder = scifact_subset(
        tmp_path_factory.mktemp("data") / "user-mapping", n_docs=N_DOCS, n_test=10, n_train=0
    )
    return load_dataset(str(folder))


@pytest.fixture()
def clean(backend: Backend, subset: Dataset) -> Iterator[Backend]:
    drop_indices(backend, "r2med-user-mapping*")
    yield backend
    drop_indices(backend, "r2med-user-mapping*")


def minilm() -> CachedEmbedder:
    return CachedEmbedder(Encoder(resolve_model("minilm")), EmbeddingCache())  # the shared, warm cache


def test_the_users_mapping_is_built_filled_and_searched_by_its_own_field_names(
    clean: Backend, subset: Dataset, tmp_path: Path
) -> None:
    backend = clean
    mapping = load_user_mapping(write(tmp_path / "team.json", user_body(backend)), FIELDS)
    first = build_index(backend, subset, [minilm()], IndexOptions(progress=False, mapping=mapping))
    assert first.created and first.published and first.indexed == N_DOCS
    assert first.alias == "r2med-user-mapping-team" and first.index.endswith(f"-u{mapping.sha256[:10]}")
    index, meta = resolve_alias(backend, subset.name + "-team") or ("", {})
    assert index == first.index and meta["status"] == "published"
    assert meta["team"] == "search-ops", "the user's own _meta is kept beside ours"
    assert meta["user_mapping"] == mapping.meta() and meta["models"]["emb"]["dims"] == 384
    props = backend.get_mapping(index).properties
    assert set(props) == {"headline", "body", "emb"}, "the harness adds no field of its own"
    assert props["body"]["analyzer"] == "plain_en" and props["body"]["similarity"] == "team_bm25"
    settings = backend.get_settings(index)["index"]
    assert settings["similarity"]["team_bm25"]["k1"] == "0.9"
    assert settings["refresh_interval"] == "30s", "the user's serving settings come back after the load"
    doc = next(iter(subset.iter_corpus()))
    (source,) = backend.get_sources(index, [doc.id], ["headline", "body"]).values()
    assert source == {"headline": doc.title, "body": doc.text}
    assert backend.count(index, {"exists": {"field": "emb"}}) == N_DOCS
    hits = backend.search(index, {"query": {"match": {"body": doc.text[:200]}}, "size": 3}).hits
    assert hits[0].id == doc.id


def test_the_same_mapping_resumes_and_a_changed_one_is_another_index(
    clean: Backend, subset: Dataset, tmp_path: Path
) -> None:
    backend = clean
    path = write(tmp_path / "team.json", user_body(backend))
    first = build_index(
        backend, subset, [], IndexOptions(progress=False, mapping=load_user_mapping(path, FIELDS))
    )
    again = build_index(
        backend, subset, [], IndexOptions(progress=False, mapping=load_user_mapping(path, FIELDS))
    )
    assert again.index == first.index and not again.created
    assert again.skipped == N_DOCS and again.indexed == 0
    # another similarity: another index, under the same alias (moved atomically once verified)
    changed = load_user_mapping(write(path, user_body(backend, k1=1.5)), FIELDS)
    other = build_index(backend, subset, [], IndexOptions(progress=False, mapping=changed))
    assert other.created and other.index != first.index and other.alias == first.alias
    assert backend.alias_targets(first.alias) == [other.index]
    assert backend.index_exists(first.index)
    # the same body with another field map is another index too
    swapped = load_user_mapping(path, "title=body,text=headline,vector=emb")
    assert swapped.sha256 != changed.sha256


def _refused(backend: Backend, subset: Dataset, mapping: UserMapping, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_index(backend, subset, [minilm()], IndexOptions(progress=False, mapping=mapping))
    assert message in str(info.value)
    assert backend.list_indices("r2med-user-mapping*") == [], "nothing may be created"


def test_a_vector_field_that_disagrees_with_the_model_or_the_engine_is_refused_before_anything(
    clean: Backend, subset: Dataset, tmp_path: Path
) -> None:
    backend = clean
    wide = write(tmp_path / "wide.json", user_body(backend, dims=768))
    dims_key = "dims" if "dims" in user_body(backend)["mappings"]["properties"]["emb"] else "dimension"
    _refused(
        backend,
        subset,
        load_user_mapping(wide, FIELDS),
        f"{wide}: mappings.properties.emb.{dims_key} is 768, model sentence-transformers/all-MiniLM-L6-v2 "
        "produces 384",
    )
    body = user_body(backend)
    own_type = body["mappings"]["properties"]["emb"]["type"]
    other_type = {"dense_vector": "knn_vector", "knn_vector": "dense_vector"}[own_type]
    body["mappings"]["properties"]["emb"] = {"type": other_type, "dims": 384, "dimension": 384}
    foreign = write(tmp_path / "foreign.json", body)
    _refused(
        backend,
        subset,
        load_user_mapping(foreign, FIELDS),
        f"{foreign}: mappings.properties.emb.type is '{other_type}', expected '{own_type}'",
    )
    _refused(
        backend,
        subset,
        load_user_mapping(write(tmp_path / "novec.json", body), "title=headline,text=body,vector=embedding"),
        "novec.json: mappings.properties.embedding is missing",
    )


def test_several_models_do_not_fit_one_vector_field(clean: Backend, subset: Dataset, tmp_path: Path) -> None:
    mapping = load_user_mapping(write(tmp_path / "team.json", user_body(clean)), FIELDS)
    with pytest.raises(ConfigError, match="holds one model's vectors"):
        build_index(clean, subset, [minilm(), minilm()], IndexOptions(progress=False, mapping=mapping))
    assert clean.list_indices("r2med-user-mapping*") == []


# ---------------------------------------------------------------- the file, before any engine is asked
BASE = {"mappings": {"properties": {"headline": {"type": "text"}, "body": {"type": "text"}}}}


def _bad(tmp_path: Path, body: Any, field_map: str | None, message: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(body if isinstance(body, str) else json.dumps(body), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_user_mapping(path, field_map)
    assert message.format(path=path) in str(info.value)


BAD: list[tuple[Any, str | None, str]] = [
    ('{"mappings": {\n  "properties": {"body": {"type": "text"},}\n}}', None, "{path}:2:43: expected JSON"),
    (BASE, "text=body,title=title", "{path}: mappings.properties.title is missing: the title goes there"),
    (BASE, None, "{path}: mappings.properties.text is missing: the text goes there (the field map's text=text)"),
    (BASE, "text=content.body", "{path}: mappings.properties.content.properties.body is missing"),
    ({"mappings": {"properties": {"body": {"type": "keyword"}}}}, "text=body", "{path}: mappings.properties.body.type is 'keyword'"),
    (BASE, "text=body,colour=red", "expected key=field pairs with keys title, text, vector, found 'colour=red'"),
    ({**BASE, "aliases": {}}, "text=body", "{path}: expected only settings and mappings at the top, found aliases"),
    ({"settings": {}}, "text=body", "{path}: mappings.properties: expected an object"),
    ([1, 2], None, "{path}: expected a JSON object with settings and mappings, found list"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "field_map", "message"), BAD, ids=[m[8:40] for _, _, m in BAD])
def test_bad_files_and_field_maps_name_the_file_and_the_json_path(
    tmp_path: Path, body: Any, field_map: str | None, message: str
) -> None:
    _bad(tmp_path, body, field_map, message)


def test_defaults_objects_and_the_identity(tmp_path: Path) -> None:
    ours = {"mappings": {"properties": {"title": {"type": "text"}, "text": {"type": "text"}}}}
    path = write(tmp_path / "ours.json", ours)
    plain = load_user_mapping(path)
    assert plain.field_map.to_dict() == {"title": "title", "text": "text", "vector": None}
    nested = copy.deepcopy(BASE)
    nested["mappings"]["properties"]["doc"] = {"properties": {"content": {"type": "text"}}}
    inner = load_user_mapping(write(tmp_path / "nested.json", nested), "text=doc.content")
    assert inner.field_map.title is None, "no title field named or mapped: the text field gets both"
    assert inner.source_doc("A title", "the body") == {"doc.content": "A title the body"}
    assert load_user_mapping(path).sha256 == plain.sha256
    (tmp_path / "reformatted.json").write_text(json.dumps(ours), encoding="utf-8")  # other whitespace
    assert load_user_mapping(tmp_path / "reformatted.json").sha256 == plain.sha256


def test_the_vector_field_defaults_to_the_models_own_name_when_mapped(tmp_path: Path) -> None:
    body = copy.deepcopy(BASE)
    plain = load_user_mapping(write(tmp_path / "plain.json", body), "text=body")
    with pytest.raises(ConfigError) as info:
        plain.vector_field("vec_minilm")
    assert "plain.json: mappings.properties.vec_minilm is missing: the vectors need a field" in str(
        info.value
    )
    assert "vector=FIELD" in str(info.value) and "no vectors" in str(info.value)
    body["mappings"]["properties"]["vec_minilm"] = {"type": "dense_vector", "dims": 384}
    assert (
        load_user_mapping(write(tmp_path / "ours.json", body), "text=body").vector_field("vec_minilm")
        == "vec_minilm"
    )
