"""The embedding option shared by `harness index` and `harness run` (`--embed-backend`)."""

from __future__ import annotations

from typing import Annotated

import typer

from indexer import (
    DEFAULT_EMBED_BACKEND,
    backend_names,
)

EmbedBackendOpt = Annotated[
    str,
    typer.Option(
        "--embed-backend",
        help=(
            f"What computes the vectors: {', '.join(backend_names())}. torch is the fp32 reference (fp16 on "
            "CUDA); onnx/onnx-int8 need the 'onnx' extra, openvino the 'openvino' extra; auto picks the "
            "fastest installed one for the device. Recorded in the cache key, the index _meta and the manifest."
        ),
    ),
]


__all__ = ["DEFAULT_EMBED_BACKEND", "EmbedBackendOpt"]
