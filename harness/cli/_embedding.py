"""The embedding options shared by `harness index` and `harness run`: the model, its prompts, whether its own
code may run, and what computes the vectors (`--embed-backend`)."""

from __future__ import annotations

from typing import Annotated

import typer

from indexer import (
    DEFAULT_EMBED_BACKEND,
    TRUST_FLAG,
    backend_names,
    remote_code_models,
)

MODEL_HELP = (
    "Embedding model: any sentence-transformers model id from the hub (org/name\\[@REVISION]; offline: from the "
    "local Hugging Face cache), a local model folder, a short name (minilm, e5, bge, ...), or openai:MODEL "
    "(an endpoint). Prompts and normalisation come from the model's own config."
)
QueryPromptOpt = Annotated[
    str | None,
    typer.Option("--query-prompt", help="Put this before every query (replaces the model's own prompt)."),
]
DocumentPromptOpt = Annotated[
    str | None,
    typer.Option(
        "--document-prompt", help="Put this before every document (replaces the model's own prompt)."
    ),
]
TrustRemoteCodeOpt = Annotated[
    bool,
    typer.Option(
        TRUST_FLAG,
        help=(
            "Allow a model that ships Python code of its own (auto_map in its config) to run it, as "
            f"{', '.join(m.hub_id.rsplit('/', 1)[-1] for m in remote_code_models())} need. Without it such "
            "a model is refused; with it, the manifest records trust_remote_code."
        ),
    ),
]

EmbedBackendOpt = Annotated[
    str,
    typer.Option(
        "--embed-backend",
        help=(
            f"What computes the vectors: {', '.join(backend_names())}, optionally /PRECISION "
            "(openvino/fp32). torch is the fp32 reference (fp16 on CUDA); onnx/onnx-int8 need the 'onnx' "
            "extra, openvino the 'openvino' extra; auto (the default) takes the fastest numerics this machine "
            "runs within 0.002 sample nDCG@10 of torch fp32, checked once per machine. Recorded in the cache "
            "key, the index name and _meta, and the manifest."
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
