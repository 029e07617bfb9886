"""Your own model end to end: `harness index` and `harness run vector` on the real engine, with models that
are not in the built-in list: a renamed copy of the packaged MiniLM (with and without a prompt in its
config), a hub id resolved from a local Hugging Face cache, and a model shipping its own code (a stand-in
class written by the test, tests/_model_folders.py) behind --trust-remote-code. SciFact cut: 120 abstracts,
20 test claims.

The packaged model's run builds the cut's index; each other model gets a copy of the cut under its own
name, so its index is built whole with its field: adding the field to a shared index would replace every
document, and each such addition soon after another waits up to 30 s for the engine to release the
replaced copies (tests/indexer/test_build.py covers that path)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.cli import main
from harness.results import Manifest, load_ranking, trec_path
from indexer._layout import alias_for
from tests._model_folders import into_hub_cache, renamed_minilm
from tests._support import scifact_subset

DATASET = "own-model-subset"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
PROMPTS = {"query": "Represent this scientific claim: ", "document": "Represent this abstract: "}


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(tmp_path_factory.mktemp("own-model") / DATASET, n_docs=120, n_test=20, n_train=0)


@pytest.fixture(scope="module")
def minilm_run(es_url: str, cut: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged model's vector run on the cut: its index holds the vectors the others are compared with."""
    return _run(es_url, cut, "minilm", tmp_path_factory.mktemp("runs") / "minilm")


#: every model here at the reference numerics: the tests compare their vectors with the bundled model's,
#: field by field in one index, and auto may choose other numerics per model (lower precision only for the
#: model it measured), which would put them in indices of their own
NUMERICS = ("--embed-backend", "torch")


def _index(es_url: str, data: Path, model: str | Path, *extra: str) -> int:
    args = ["index", "--dataset", str(data), "--model", str(model), "--url", es_url, "--no-progress"]
    return main([*args, *NUMERICS, *extra])


def _run(es_url: str, data: Path, model: str | Path, out: Path, *extra: str) -> Path:
    args = ["run", "vector", "--dataset", str(data), "--model", str(model), "--output", str(out)]
    assert main([*args, "--url", es_url, "--records", "jsonl", "--no-progress", *NUMERICS, *extra]) == 0
    return out


def _own(cut: Path, tmp_path: Path, name: str) -> Path:
    """A copy of the cut named ``name`` (its own dataset, so its own index)."""
    return Path(shutil.copytree(cut, tmp_path / name))


def _vectors(es: Any, field: str, dataset: str = DATASET) -> dict[str, np.ndarray]:
    hits = es.search(
        index=alias_for(dataset),
        size=1000,
        query={"exists": {"field": field}},
        source={"includes": [field], "exclude_vectors": False},
    )["hits"]["hits"]
    return {h["_id"]: np.asarray(h["_source"][field], dtype=np.float32) for h in hits}


def _field_meta(es: Any, field: str, dataset: str) -> dict[str, object]:
    mapping = es.indices.get_mapping(index=alias_for(dataset))
    (only,) = mapping.values()
    models: dict[str, dict[str, object]] = only["mappings"]["_meta"]["models"]
    return models[field]


def _top10(run_dir: Path, dataset: str = DATASET) -> dict[str, list[str]]:
    return {qid: docs[:10] for qid, docs in load_ranking(trec_path(run_dir, dataset, "vector")).items()}


def test_a_renamed_minilm_folder_computes_the_bundled_vectors(
    es_url: str, es_inspect: Any, cut: Path, minilm_run: Path, tmp_path: Path
) -> None:
    folder = renamed_minilm(tmp_path / "clinical-minilm", prompts={"query": "", "document": ""})
    data = _own(cut, tmp_path, "own-model-renamed")
    assert _index(es_url, data, folder) == 0
    run_dir = _run(es_url, data, folder, tmp_path / "run")
    model = Manifest.load(run_dir / "manifest.json").model
    assert model is not None and model.id == "local/clinical-minilm"
    assert model.revision.startswith("sha256:") and model.field.startswith("vec_clinical_minilm_")
    assert (model.query_prompt, model.document_prompt, model.trust_remote_code) == ("", "", False)

    ours, bundled = _vectors(es_inspect, model.field, data.name), _vectors(es_inspect, "vec_all_minilm_l6_v2")
    assert len(ours) == len(bundled) == 120
    for doc_id, vector in ours.items():
        np.testing.assert_allclose(vector, bundled[doc_id], atol=1e-6)
    assert _top10(run_dir, data.name) == _top10(minilm_run)


def test_a_prompt_in_the_folder_config_reaches_documents_and_queries(
    es_url: str,
    es_inspect: Any,
    cut: Path,
    minilm_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = renamed_minilm(tmp_path / "clinical-minilm-prompted", prompts=PROMPTS)
    data = _own(cut, tmp_path, "own-model-prompted")
    run_dir = _run(es_url, data, folder, tmp_path / "run")  # the run builds the model's field itself
    model = Manifest.load(run_dir / "manifest.json").model
    assert model is not None and (model.query_prompt, model.document_prompt) == (
        PROMPTS["query"],
        PROMPTS["document"],
    )
    assert _field_meta(es_inspect, model.field, data.name)["document_prompt"] == PROMPTS["document"]

    ours, bundled = _vectors(es_inspect, model.field, data.name), _vectors(es_inspect, "vec_all_minilm_l6_v2")
    cosines = [float(np.dot(vector, bundled[doc_id])) for doc_id, vector in ours.items()]
    # the same weights with a prompt: close (cosine 0.99 to 0.998 here) but never the bundled vectors, which
    # the renamed folder without a prompt reproduces to 1e-6 (the test above)
    assert len(cosines) == 120 and max(cosines) < 0.999 and np.mean(cosines) < 0.998
    assert _top10(run_dir, data.name) != _top10(minilm_run)

    # --document-prompt reaches the index: another prompt than the field was built with is refused
    capsys.readouterr()
    args = [
        "run",
        "vector",
        "--dataset",
        str(data),
        "--model",
        str(folder),
        "--document-prompt",
        "",
        *NUMERICS,
    ]
    assert main([*args, "--output", str(tmp_path / "other"), "--url", es_url, "--no-progress"]) != 0
    assert f"was embedded with document prompt {PROMPTS['document']!r}, not ''" in capsys.readouterr().err


def test_a_hub_id_from_the_local_cache_records_its_commit(
    es_url: str, es_inspect: Any, cut: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "hf-cache"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    into_hub_cache(cache, "acme/clinical-minilm", renamed_minilm(tmp_path / "src"), COMMIT)
    data = _own(cut, tmp_path, "own-model-hub")
    run_dir = _run(
        es_url, data, "acme/clinical-minilm", tmp_path / "run", "--rerank", "bi:acme/clinical-minilm@main@50"
    )
    manifest = Manifest.load(run_dir / "manifest.json")
    model = manifest.model
    assert model is not None and (model.id, model.revision, model.field) == (
        "acme/clinical-minilm",
        COMMIT,
        "vec_clinical_minilm",
    )
    meta = _field_meta(es_inspect, "vec_clinical_minilm", data.name)
    assert (meta["model_id"], meta["revision"]) == ("acme/clinical-minilm", COMMIT)
    # the bi-encoder reranker takes hub ids too; the model that built the index reorders nothing
    rerank = manifest.config["rerank"]
    assert (rerank["kind"], rerank["model"], rerank["revision"]) == ("bi", "acme/clinical-minilm", COMMIT)
    reranked = load_ranking(trec_path(run_dir, data.name, "vector>rerank"))
    assert reranked == load_ranking(trec_path(run_dir, data.name, "vector"))


def test_a_model_with_its_own_code_runs_only_with_the_flag_and_says_so(
    es_url: str,
    es_inspect: Any,
    cut: Path,
    minilm_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = renamed_minilm(
        tmp_path / "standin-code", auto_map={"AutoModel": "modeling_standin.StandInBertModel"}
    )
    data = _own(cut, tmp_path, "own-model-code")
    capsys.readouterr()
    assert _index(es_url, data, folder) == 2
    err = capsys.readouterr().err
    assert (
        "ships Python code that loading it would run on this machine" in err and "--trust-remote-code" in err
    )

    run_dir = _run(es_url, data, folder, tmp_path / "run", "--trust-remote-code")
    model = Manifest.load(run_dir / "manifest.json").model
    assert model is not None and model.trust_remote_code
    ours, bundled = _vectors(es_inspect, model.field, data.name), _vectors(es_inspect, "vec_all_minilm_l6_v2")
    doc_id = next(iter(ours))
    np.testing.assert_allclose(ours[doc_id], bundled[doc_id], atol=1e-6)  # the stand-in computes as BERT
