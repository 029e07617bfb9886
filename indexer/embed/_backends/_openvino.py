"""``openvino``: the OpenVINO runtime on the CPU, at the CPU's native inference precision or another.

OpenVINO reads the plain exported ONNX graph. Its CPU plugin computes in bf16
where the processor has native bf16 matrix units (AMX), and in fp32
elsewhere; that default is read from the runtime before anything is embedded.
``openvino/fp32`` (or ``/bf16``, ``/fp16`` where the CPU offers it) asks for
another. The precision is set explicitly when the graph is compiled and
recorded with every vector.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from base import EmbeddingError
from indexer.embed._backend import EmbeddingBackend, SentenceModel, register
from indexer.embed._backends._export import ensure_onnx
from indexer.embed._backends._runtime import RuntimeModel, model_folder, read_pipeline
from indexer.embed._models import ModelSpec

# OpenVINO element type names -> our precision names
_PRECISIONS = {"bf16": "bf16", "f16": "fp16", "f32": "fp32"}
_HINTS = {ours: theirs for theirs, ours in _PRECISIONS.items()}


@cache
def _core() -> Any:
    import openvino

    return openvino.Core()


@register
class OpenVinoBackend(EmbeddingBackend):
    name = "openvino"
    summary = "OpenVINO runtime, the CPU's native precision (bf16 with AMX, else fp32)"
    modules = ("openvino", "onnx")
    extra = "openvino"
    devices = ("cpu",)

    def precision(self, device: str) -> str:
        hint = _core().get_property("CPU", "INFERENCE_PRECISION_HINT")
        name = hint.get_type_name() if hasattr(hint, "get_type_name") else str(hint)
        # anything else: compile with an explicit f32 hint, so the recorded precision stays true
        return _PRECISIONS.get(name, "fp32")

    def precisions(self, device: str) -> tuple[str, ...]:
        offered = {str(c).lower() for c in _core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")}
        others = [p for p in ("fp32", "bf16", "fp16") if p == "fp32" or p in offered]
        default = self.precision(device)
        return (default, *(p for p in others if p != default))

    def load(
        self, spec: ModelSpec, device: str, models_dir: Path | None, *, threads: int | None = None
    ) -> SentenceModel:
        pipeline = read_pipeline(model_folder(spec), spec.pooling)
        path = ensure_onnx(spec, "plain", models_dir)
        config: dict[str, Any] = {
            "INFERENCE_PRECISION_HINT": _HINTS[self.check_precision(spec.precision, device)]
        }
        if threads is not None:
            config["INFERENCE_NUM_THREADS"] = threads
        try:
            compiled = _core().compile_model(str(path), "CPU", config)
        except Exception as exc:
            raise EmbeddingError(f"OpenVINO could not compile {path}; delete it to export again") from exc
        request = compiled.create_infer_request()
        output = compiled.output(0)
        dims = int(output.get_partial_shape()[-1].get_length())

        def run(feeds: dict[str, np.ndarray]) -> np.ndarray:
            return np.asarray(request.infer(feeds)[output])

        return RuntimeModel(pipeline, run, [p.get_any_name() for p in compiled.inputs], dims)
