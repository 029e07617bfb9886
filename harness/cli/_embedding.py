"""The embedding options under the names `harness run` imports them by today.

They are defined once in :mod:`harness.cli._options` (where `harness index` takes them from); this module
goes when `harness run` takes them from there too (its ``--model`` becoming ``--embed-model``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli._options import (
    DocumentPromptOpt,
    QueryPromptOpt,
    TrustRemoteCodeOpt,
)
from indexer import DEFAULT_EMBED_BACKEND, backend_names

MODEL_HELP = (
    "Embedding model: any sentence-transformers model id from the hub (org/name\\[@REVISION]; offline: from the "
    "local Hugging Face cache), a local model folder, a short name (minilm, e5, bge, ...), or openai:MODEL "
    "(an endpoint). Prompts and normalisation come from the model's own config."
)
#: run's: a str that defaults to DEFAULT_EMBED_BACKEND (the shared one defaults to None, "not given")
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


__all__ = [
    "DEFAULT_EMBED_BACKEND",
    "MODEL_HELP",
    "DocumentPromptOpt",
    "EmbedBackendOpt",
    "QueryPromptOpt",
    "TrustRemoteCodeOpt",
]
