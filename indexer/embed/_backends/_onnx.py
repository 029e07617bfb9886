"""``onnx`` and ``onnx-int8``: ONNX Runtime on the CPU, on graphs exported once from the model folder.

Dynamic int8 quantization picks one activation scale per tensor per call, from
the largest value in it: in a batch of several texts, a text's vector then
depends on its neighbours (and on their padding); the same abstract in two
batches came out at cosine 0.991 with itself on SciFact. ``onnx-int8`` therefore
runs every text alone (one row per call, so no padding either): its vector is a
function of the text, as the embedding cache key assumes, at the same
throughput as batches of 32 on our CPUs (measured in ``bench/embedding.py``'s
development; 8.6 against 8.6 docs/s).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np

from base import EmbeddingError
from indexer.embed._backend import EmbeddingBackend, SentenceModel, register
from indexer.embed._backends._export import HIDDEN_OUTPUT, ensure_onnx
from indexer.embed._backends._runtime import RuntimeModel, model_folder, read_pipeline
from indexer.embed._models import ModelSpec
from indexer.embed._threads import embed_threads


class _OnnxRuntimeBackend(EmbeddingBackend):
    modules = ("onnxruntime", "onnx")
    extra = "onnx"
    devices = ("cpu",)
    artifact: ClassVar[str]
    numerics: ClassVar[str]
    per_text: ClassVar[bool] = False  # run each text alone (see the module docstring)

    def precision(self, device: str) -> str:
        return self.numerics

    def load(
        self, spec: ModelSpec, device: str, models_dir: Path | None, *, threads: int | None = None
    ) -> SentenceModel:
        import onnxruntime as ort

        self.check_precision(spec.precision, device)
        pipeline = read_pipeline(
            model_folder(spec), spec.pooling
        )  # refuses unsupported modules before any export
        path = ensure_onnx(spec, self.artifact, models_dir)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initializers are noise here
        options.intra_op_num_threads = threads or embed_threads()  # this process's cores, not the host's
        # idle threads sleep rather than spin, so a local engine sharing the cores gets them between batches
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbeddingError(f"ONNX Runtime could not load {path}; delete it to export again") from exc
        dims = int(session.get_outputs()[0].shape[-1])

        def run(feeds: dict[str, np.ndarray]) -> np.ndarray:
            return np.asarray(session.run([HIDDEN_OUTPUT], feeds)[0])

        inputs = [i.name for i in session.get_inputs()]
        return RuntimeModel(pipeline, run, inputs, dims, per_text=self.per_text)


@register
class OnnxBackend(_OnnxRuntimeBackend):
    name = "onnx"
    summary = "ONNX Runtime, fused fp32 graph"
    artifact = "fused"
    numerics = "fp32"


@register
class OnnxInt8Backend(_OnnxRuntimeBackend):
    name = "onnx-int8"
    summary = "ONNX Runtime, dynamically quantized int8 weights"
    artifact = "int8"
    numerics = "int8"
    per_text = True
