"""The sentence-transformers pipeline around an exported graph: tokenizer, pooling, output.

ONNX Runtime and OpenVINO run only the transformer (token ids in, hidden
states out). This module does the rest as sentence-transformers does it, read
from the model folder: the prompt goes before the text, the tokenizer pads and
truncates to ``max_seq_length``, and the pooling of ``1_Pooling/config.json``
turns hidden states into one vector per text. Models with other modules (a
Dense projection, say) are refused with a clear error: they need the torch
backend.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from base import EmbeddingError
from indexer.embed._models import ModelSpec

Runner = Callable[[dict[str, np.ndarray]], np.ndarray]

_LEGACY_POOLING_KEYS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_SUPPORTED_MODULES = ("Transformer", "Pooling", "Normalize")


def _mask(attention_mask: np.ndarray) -> np.ndarray:
    return attention_mask[..., None].astype(np.float32)


def _mean(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    mask = _mask(attention_mask)
    return (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)


def _mean_sqrt_len(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    mask = _mask(attention_mask)
    return (hidden * mask).sum(axis=1) / np.sqrt(np.maximum(mask.sum(axis=1), 1e-9))


def _max(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    masked = np.where(_mask(attention_mask) > 0, hidden, np.float32(-1e9))
    return masked.max(axis=1)


def _cls(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    return hidden[:, 0]


def _last_token(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    # the last real token whichever side the tokenizer pads on
    last = attention_mask.shape[1] - 1 - np.argmax(attention_mask[:, ::-1], axis=1)
    return hidden[np.arange(hidden.shape[0]), last]


POOLINGS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "mean": _mean,
    "mean_sqrt_len_tokens": _mean_sqrt_len,
    "max": _max,
    "cls": _cls,
    "lasttoken": _last_token,
}


@dataclass(frozen=True)
class Pipeline:
    """How a sentence-transformers folder turns text into a vector, around the transformer."""

    folder: Path
    max_seq_length: int | None  # None: the tokenizer's own limit
    do_lower_case: bool
    pooling: str


def model_folder(spec: ModelSpec) -> Path:
    """The local folder of ``spec``'s files (a hub model is looked up in, or fetched to, the HF cache).

    A model with code of its own is refused: exports go through transformers' stock classes.
    """
    if spec.trust_remote_code:
        raise EmbeddingError(
            f"model {spec.model_id!r} runs code of its own (trust_remote_code), which the ONNX and OpenVINO "
            "exports cannot trace; use --embed-backend torch for it"
        )
    if spec.is_local:
        return Path(spec.path_or_name)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec.path_or_name, revision=spec.revision))
    except Exception as exc:
        raise EmbeddingError(
            f"model {spec.model_id!r} is not a local folder and could not be fetched from the hub "
            f"(revision {spec.revision}); pass a local model folder with --embed-model"
        ) from exc


def _read_json(path: Path) -> Mapping[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read {path}: expected a JSON object") from exc
    if not isinstance(found, dict):
        raise EmbeddingError(f"{path} holds {type(found).__name__}, expected a JSON object")
    return found


def _pooling_mode(config: Mapping[str, Any], path: Path) -> str:
    mode = config.get("pooling_mode")
    if mode is None:
        active = [name for key, name in _LEGACY_POOLING_KEYS.items() if config.get(key)]
        mode = active[0] if len(active) == 1 else active
    if config.get("include_prompt") is False:
        raise EmbeddingError(
            f"{path}: pooling that leaves the prompt out is supported by the torch backend only"
        )
    if not isinstance(mode, str) or mode not in POOLINGS:
        raise EmbeddingError(
            f"{path}: pooling {mode!r} is not supported outside torch (supported: {', '.join(POOLINGS)}); "
            "use --embed-backend torch"
        )
    return mode


def read_pipeline(folder: Path, default_pooling: str | None = None) -> Pipeline:
    """The pipeline a sentence-transformers folder declares (a plain Hugging Face folder: ``default_pooling``,
    else mean pooling, as sentence-transformers does)."""
    modules_file = folder / "modules.json"
    pooling = default_pooling or "mean"
    if pooling not in POOLINGS:
        raise EmbeddingError(
            f"pooling {pooling!r} is not supported outside torch (supported: {', '.join(POOLINGS)}); "
            "use --embed-backend torch"
        )
    if modules_file.is_file():
        modules = json.loads(modules_file.read_text(encoding="utf-8"))
        for module in modules:
            kind = str(module.get("type", "")).rsplit(".", 1)[-1]
            if kind not in _SUPPORTED_MODULES:
                raise EmbeddingError(
                    f"{modules_file}: module {module.get('type')!r} is not supported outside torch (supported: "
                    f"{', '.join(_SUPPORTED_MODULES)}); use --embed-backend torch"
                )
            if kind == "Pooling":
                config_path = folder / module.get("path", "") / "config.json"
                pooling = _pooling_mode(_read_json(config_path), config_path)
    st_config = folder / "sentence_bert_config.json"
    settings = _read_json(st_config) if st_config.is_file() else {}
    max_len = settings.get("max_seq_length")
    return Pipeline(
        folder=folder,
        max_seq_length=int(max_len) if max_len else None,
        do_lower_case=bool(settings.get("do_lower_case", False)),
        pooling=pooling,
    )


class FastTokenizer:
    """A folder's ``tokenizer.json`` through the ``tokenizers`` library, called like a Hugging Face tokenizer.

    The same Rust tokenizer a Hugging Face *fast* tokenizer wraps, without importing
    transformers (which imports torch: about 500 MiB of resident memory the ONNX
    and OpenVINO backends do not otherwise need). Padding and truncation are set
    per call, whatever defaults the file carries.
    """

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        config_path = folder / "tokenizer_config.json"
        config = _read_json(config_path) if config_path.is_file() else {}
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._pad_token = str(config.get("pad_token") or "[PAD]")
        self._pad_id = self._tokenizer.token_to_id(self._pad_token) or 0
        self._side = "left" if config.get("padding_side") == "left" else "right"
        self.model_max_length = int(config.get("model_max_length") or 512)

    def __call__(
        self,
        texts: Sequence[str],
        *,
        padding: bool = False,
        truncation: bool | str = False,
        max_length: int | None = None,
        return_tensors: str | None = None,
    ) -> dict[str, Any]:
        tokenizer = self._tokenizer
        if truncation and max_length:
            tokenizer.enable_truncation(max_length)
        else:
            tokenizer.no_truncation()
        if padding:
            tokenizer.enable_padding(direction=self._side, pad_id=self._pad_id, pad_token=self._pad_token)
        else:
            tokenizer.no_padding()
        encodings = tokenizer.encode_batch(list(texts))
        found: dict[str, Any] = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        if return_tensors == "np":
            found = {k: np.asarray(v, dtype=np.int64) for k, v in found.items()}
        return found


def load_tokenizer(folder: Path) -> Any:
    """:class:`FastTokenizer` when the folder has a ``tokenizer.json``, else transformers' AutoTokenizer."""
    if (folder / "tokenizer.json").is_file():
        return FastTokenizer(folder)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))


class RuntimeModel:
    """A :class:`~indexer.embed._backend.SentenceModel` over any runtime that maps token ids to hidden states."""

    def __init__(
        self,
        pipeline: Pipeline,
        run: Runner,
        input_names: Sequence[str],
        dims: int,
        *,
        per_text: bool = False,
    ) -> None:
        self.pipeline = pipeline
        self.per_text = per_text
        self._run = run
        self._inputs = tuple(input_names)
        self._dims = dims
        self._tokenizer = load_tokenizer(pipeline.folder)
        limit = int(getattr(self._tokenizer, "model_max_length", 512) or 512)
        self._max_len = min(pipeline.max_seq_length or limit, limit)
        self._pool = POOLINGS[pipeline.pooling]

    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    @property
    def max_seq_length(self) -> int:
        return self._max_len

    @property
    def dims(self) -> int:
        return self._dims

    def encode_batch(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        """Vectors for ``texts``; with ``per_text`` each text runs alone (see the int8 backend for why)."""
        if self.per_text and len(texts) > 1:
            return np.concatenate([self._encode(texts[i : i + 1], prompt) for i in range(len(texts))])
        return self._encode(texts, prompt)

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        batch = [prompt + t for t in texts] if prompt else list(texts)
        if self.pipeline.do_lower_case:
            batch = [t.lower() for t in batch]
        encoded = self._tokenizer(
            batch, padding=True, truncation="longest_first", max_length=self._max_len, return_tensors="np"
        )
        feeds = {}
        for name in self._inputs:
            values = encoded.get(name)
            feeds[name] = (
                np.zeros_like(encoded["input_ids"]) if values is None else np.asarray(values)
            ).astype(np.int64)
        hidden = self._run(feeds)
        return self._pool(np.asarray(hidden, dtype=np.float32), np.asarray(encoded["attention_mask"]))
