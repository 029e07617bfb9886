"""Embedding backends on the real bundled model: registry, numerics, exports, cache separation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from base import ConfigError, EmbeddingError
from indexer.embed import (
    BACKENDS,
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    backend_names,
    cache_key,
    check_backend_name,
    get_backend,
    resolve_backend,
    spec_key,
    split_backend,
)
from indexer.embed._backends._export import ARTIFACTS, RECIPE, ensure_onnx, export_folder
from indexer.embed._backends._runtime import FastTokenizer, read_pipeline
from indexer.embed._backends._torch import TorchModel, gpu_batch_size, model_shape

REPO = Path(__file__).resolve().parents[3]


def texts_of(docs: list[tuple[str, str]]) -> list[str]:
    return [text for _, text in docs]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1))


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Exports for this module only (the first export of each graph is part of what is tested)."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def int8_vectors(minilm: ModelSpec, scifact_docs: list[tuple[str, str]], models_dir: Path) -> np.ndarray:
    return Encoder(minilm, backend="onnx-int8", models_dir=models_dir).encode_documents(
        texts_of(scifact_docs)
    )


def test_registry_lists_every_backend_and_refuses_unknown_names() -> None:
    assert set(backend_names()) == {"auto", "torch", "onnx", "onnx-int8", "openvino"}
    assert all(BACKENDS[name].name == name for name in BACKENDS)
    with pytest.raises(ConfigError, match=r"unknown embedding backend 'tensorrt': expected one of auto, "):
        get_backend("tensorrt")


def test_precision_follows_backend_and_device() -> None:
    assert get_backend("torch").precision("cpu") == "fp32"
    assert get_backend("torch").precision("cuda:0") == "fp16"
    assert get_backend("onnx").precision("cpu") == "fp32"
    assert get_backend("onnx-int8").precision("cpu") == "int8"
    assert get_backend("openvino").precision("cpu") in {"fp32", "bf16", "fp16"}


def test_cpu_only_backends_refuse_a_gpu(minilm: ModelSpec) -> None:
    encoder = Encoder(minilm, backend="onnx-int8", device="cuda")
    with pytest.raises(ConfigError, match=r"onnx-int8 runs on cpu only, not on 'cuda'"):
        _ = encoder.device


def test_a_backend_is_named_with_an_optional_precision() -> None:
    assert split_backend("OpenVINO/FP32") == ("openvino", "fp32")
    assert split_backend("onnx-int8") == ("onnx-int8", None)
    assert check_backend_name("openvino/fp32") == "openvino/fp32"
    assert check_backend_name("auto") == "auto"
    with pytest.raises(ConfigError, match=r"expected a precision among fp32, fp16, bf16, int8, found 'fp8'"):
        check_backend_name("openvino/fp8")
    with pytest.raises(ConfigError, match="auto chooses its own precision"):
        check_backend_name("auto/fp32")
    with pytest.raises(ConfigError, match="unknown embedding backend 'tensorrt'"):
        check_backend_name("tensorrt/fp16")
    with pytest.raises(ConfigError, match="auto is decided per model"):
        resolve_backend("auto")


def test_each_backend_says_which_precisions_it_runs(minilm: ModelSpec) -> None:
    assert get_backend("torch").precisions("cpu") == ("fp32",)
    assert get_backend("torch").precisions("cuda:0") == ("fp16", "fp32")
    assert get_backend("onnx-int8").precisions("cpu") == ("int8",)
    openvino = get_backend("openvino").precisions("cpu")
    assert openvino[0] == get_backend("openvino").precision("cpu") and "fp32" in openvino
    encoder = Encoder(minilm, backend="openvino/fp32")
    assert encoder.spec.numerics == "openvino/fp32" and encoder.choice is None
    with pytest.raises(ConfigError, match=r"onnx-int8 computes at int8 on cpu, not at fp32"):
        _ = Encoder(minilm, backend="onnx-int8/fp32").spec


def test_gpu_batch_size_is_a_power_of_two_sized_to_free_memory() -> None:
    bge_base = {"hidden": 768, "intermediate": 3072, "heads": 12, "seq_len": 512}
    gib = 1024**3
    sizes = [gpu_batch_size(free * gib, **bge_base) for free in (1, 8, 40, 130)]
    assert sizes == sorted(sizes) and sizes[0] == 32 and sizes[-1] <= 4096
    assert all(s & (s - 1) == 0 for s in sizes)
    # the chosen batch's activations stay within half the free memory (fp16)
    per_text = 2 * 2 * 512 * (4 * 768 + 3072 + 12 * 512)
    assert sizes[2] * per_text <= 0.5 * 40 * gib < 2 * sizes[2] * per_text


def test_gpu_batch_size_reads_the_model_shape(minilm: ModelSpec) -> None:
    encoder = Encoder(minilm, device="cpu")
    model = encoder.load()
    assert isinstance(model, TorchModel)
    assert model_shape(model) == {"hidden": 384, "intermediate": 1536, "heads": 12, "seq_len": 256}
    assert encoder.batch_size == 32  # on a CPU the backend keeps the default


def test_spec_identity_adds_numerics_only_off_the_reference(minilm: ModelSpec) -> None:
    assert minilm.identity() == {"id": minilm.model_id, "revision": minilm.revision}
    int8 = minilm.with_numerics("onnx-int8", "int8")
    assert int8.identity() == {**minilm.identity(), "backend": "onnx-int8", "precision": "int8"}
    assert int8.numerics == "onnx-int8/int8"
    with pytest.raises(EmbeddingError, match="unknown precision 'int4'"):
        minilm.with_numerics("onnx", "int4")


def test_cache_keys_separate_numerics_and_keep_reference_keys(minilm: ModelSpec) -> None:
    text = "Aspirin irreversibly inhibits COX-1."
    reference = spec_key(minilm, "", text)
    # the reference key is the one the cache used before backends existed
    assert reference == cache_key(minilm.model_id, minilm.revision, "", text)
    keys = {
        spec_key(minilm.with_numerics(backend, precision), "", text)
        for backend, precision in [
            ("torch", "fp32"),
            ("torch", "fp16"),
            ("onnx", "fp32"),
            ("onnx-int8", "int8"),
        ]
    }
    assert len(keys) == 4


def test_onnx_backends_match_torch_within_their_precision(
    minilm: ModelSpec,
    scifact_docs: list[tuple[str, str]],
    reference_vectors: np.ndarray,
    int8_vectors: np.ndarray,
    models_dir: Path,
) -> None:
    fp32 = Encoder(minilm, backend="onnx", models_dir=models_dir)
    vectors = fp32.encode_documents(texts_of(scifact_docs))
    assert fp32.spec.numerics == "onnx/fp32"
    np.testing.assert_allclose(vectors, reference_vectors, atol=2e-4)
    assert int8_vectors.shape == reference_vectors.shape and int8_vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(int8_vectors, axis=1), 1.0, atol=1e-5)
    cos = cosines(int8_vectors, reference_vectors)
    assert cos.mean() >= 0.99 and cos.min() > 0.97
    assert np.abs(int8_vectors - reference_vectors).max() > 1e-3  # really other numerics, not torch again


def test_openvino_matches_torch(
    minilm: ModelSpec, scifact_docs: list[tuple[str, str]], reference_vectors: np.ndarray, models_dir: Path
) -> None:
    encoder = Encoder(minilm, backend="openvino", models_dir=models_dir)
    vectors = encoder.encode_documents(texts_of(scifact_docs[:16]))
    assert encoder.spec.backend == "openvino" and encoder.spec.precision in {"fp32", "bf16", "fp16"}
    assert cosines(vectors, reference_vectors[:16]).min() > 0.999
    fp32 = Encoder(minilm, backend="openvino/fp32", models_dir=models_dir)
    np.testing.assert_allclose(
        fp32.encode_documents(texts_of(scifact_docs[:16])), reference_vectors[:16], atol=2e-4
    )
    if encoder.spec.precision != "fp32":  # really computed at the precision asked for, not the default
        assert not np.allclose(vectors, reference_vectors[:16], atol=2e-5)


def test_exports_are_made_once_and_keyed_by_revision(
    minilm: ModelSpec, int8_vectors: np.ndarray, models_dir: Path
) -> None:
    folder = export_folder(minilm, models_dir)
    record = json.loads((folder / "export.json").read_text())
    assert record["model_id"] == minilm.model_id and record["revision"] == minilm.revision
    assert record["recipe"] == RECIPE
    assert {"plain", "fused", "int8"} <= set(record["artifacts"])
    int8 = folder / ARTIFACTS["int8"]
    stamp = int8.stat().st_mtime_ns
    assert ensure_onnx(minilm, "int8", models_dir) == int8 and int8.stat().st_mtime_ns == stamp
    other = export_folder(minilm.with_prompts(query_prompt="q: "), models_dir)
    assert other == folder  # prompts do not change the graph
    assert (
        export_folder(ModelSpec(minilm.model_id, minilm.path_or_name, "another-revision"), models_dir)
        != folder
    )
    assert not list(folder.glob("*.tmp*"))


def test_cache_separates_backends(
    minilm: ModelSpec,
    scifact_docs: list[tuple[str, str]],
    reference_vectors: np.ndarray,
    int8_vectors: np.ndarray,
    models_dir: Path,
    tmp_path: Path,
) -> None:
    docs = scifact_docs[:16]
    with EmbeddingCache(tmp_path) as cache:
        torch_emb = CachedEmbedder(Encoder(minilm), cache)
        first = np.concatenate([v for _, v in torch_emb.embed_documents(docs)])
        assert torch_emb.stats.texts_encoded == 16
        # the same texts on int8: nothing is taken from torch's entries
        int8_emb = CachedEmbedder(Encoder(minilm, backend="onnx-int8", models_dir=models_dir), cache)
        second = np.concatenate([v for _, v in int8_emb.embed_documents(docs)])
        assert int8_emb.stats.cache_hits == 0 and int8_emb.stats.texts_encoded == 16
        assert len(cache) == 32
        np.testing.assert_allclose(first, reference_vectors[:16], atol=1e-5)
        # int8 runs each text alone, so a vector does not depend on its batch neighbours (16 here, 32 there)
        np.testing.assert_allclose(second, int8_vectors[:16], atol=1e-6)
        # each backend then finds its own vectors, bit for bit, without loading a model
        for backend, expected in (("onnx-int8", second), ("torch", first)):
            again = CachedEmbedder(Encoder(minilm, backend=backend, models_dir=models_dir), cache)
            found = np.concatenate([v for _, v in again.embed_documents(docs)])
            assert again.stats.cache_hits == 16 and again.stats.model_calls == 0 and not again.encoder.loaded
            assert np.array_equal(found, expected)


def test_fast_tokenizer_matches_transformers(scifact_docs: list[tuple[str, str]], minilm: ModelSpec) -> None:
    from transformers import AutoTokenizer

    texts = [*texts_of(scifact_docs), "", "Ünïcödé  CAFÉ\ttab", "word " * 600]
    folder = Path(minilm.path_or_name)
    ours = FastTokenizer(folder)(
        texts, padding=True, truncation="longest_first", max_length=256, return_tensors="np"
    )
    theirs = AutoTokenizer.from_pretrained(str(folder))(
        texts, padding=True, truncation="longest_first", max_length=256, return_tensors="np"
    )
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert np.array_equal(ours[name], theirs[name]), name


def test_pipelines_outside_torch_refuse_extra_modules(tmp_path: Path) -> None:
    (tmp_path / "modules.json").write_text(
        json.dumps(
            [
                {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
            ]
        )
    )
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(EmbeddingError, match=r"module 'sentence_transformers.models.Dense' is not supported"):
        read_pipeline(tmp_path)
    (tmp_path / "modules.json").write_text(
        json.dumps(
            [{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
        )
    )
    assert read_pipeline(tmp_path).pooling == "cls"


@pytest.mark.parametrize(
    ("backend", "module", "extra"),
    [("onnx-int8", "onnxruntime", "onnx"), ("openvino", "openvino", "openvino")],
)
def test_missing_backend_package_is_a_clear_error(backend: str, module: str, extra: str) -> None:
    """The package is made unimportable in a child process (as if not installed); `harness index` must
    name the extra and stop before connecting anywhere (the URL points at a closed port)."""
    code = (
        "import sys\n"
        f"sys.modules[{module!r}] = None  # import {module} now raises ImportError\n"
        "from harness.cli import main\n"
        f"sys.exit(main(['index', '--dataset', 'sample', '--embed-backend', {backend!r}, "
        "'--url', 'http://127.0.0.1:9', '--no-progress']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert f"--embed-backend {backend} needs the Python package '{module}'" in output
    assert f"pip install 'r2med-harness[{extra}]'" in output
    assert "Traceback" not in output and "127.0.0.1:9" not in output
