"""What a model folder says about itself: prompts, normalisation, similarity, and code of its own.

Read from the files sentence-transformers and transformers read: ``config_sentence_transformers.json``
(``prompts``, ``default_prompt_name``, ``similarity_fn_name``), ``modules.json`` (a ``Normalize`` module,
custom module classes) and the ``auto_map`` of ``config.json`` / ``tokenizer_config.json`` (classes whose
Python code ships with the weights; loading them runs that code). Nothing here imports or runs the model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import EmbeddingError

ST_CONFIG = "config_sentence_transformers.json"
MODULES = "modules.json"
#: module types sentence-transformers ships (any other is a class from the model's own .py files)
_ST_PACKAGE = "sentence_transformers."
_AUTO_MAP_FILES = ("config.json", "tokenizer_config.json")
#: the prompt names sentence-transformers' encode_document tries, in its order
_DOCUMENT_PROMPT_NAMES = ("document", "passage", "corpus")


@dataclass(frozen=True, slots=True)
class FolderConfig:
    """A model folder's own settings; ``None`` where the folder says nothing."""

    query_prompt: str | None = None
    document_prompt: str | None = None
    has_modules: bool = False  # modules.json present: the folder names its own pooling
    normalize_module: bool = False  # a Normalize module: vectors come out unit length
    similarity: str | None = None  # similarity_fn_name (sentence-transformers' default is cosine)
    custom_code: tuple[str, ...] = ()  # where the folder declares code of its own


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read {path}: expected JSON") from exc


def _prompts(settings: Mapping[str, Any]) -> tuple[str | None, str | None]:
    prompts = settings.get("prompts") or {}
    if not isinstance(prompts, Mapping):
        return None, None
    named = {k: v for k, v in prompts.items() if isinstance(v, str)}
    default = named.get(str(settings.get("default_prompt_name")))  # what encode() applies when told nothing
    query = named.get("query", default)
    document = next((named[n] for n in _DOCUMENT_PROMPT_NAMES if n in named), default)
    return query, document


def custom_code(folder: Path) -> tuple[str, ...]:
    """Each place where ``folder`` declares classes from its own Python files (empty: none)."""
    found = []
    for name in _AUTO_MAP_FILES:
        data = _json(folder / name)
        auto_map = data.get("auto_map") if isinstance(data, Mapping) else None
        if isinstance(auto_map, Mapping):
            found += [f"{name} auto_map {key} -> {value}" for key, value in auto_map.items()]
    modules = _json(folder / MODULES)
    for module in modules if isinstance(modules, list) else []:
        kind = str(module.get("type", "")) if isinstance(module, Mapping) else ""
        if kind and not kind.startswith(_ST_PACKAGE):
            found.append(f"{MODULES} module {kind}")
    return tuple(found)


def read_folder(folder: Path) -> FolderConfig:
    """The settings ``folder`` declares (prompts, Normalize module, similarity, custom code)."""
    settings = _json(folder / ST_CONFIG)
    settings = settings if isinstance(settings, Mapping) else {}
    query, document = _prompts(settings)
    modules = _json(folder / MODULES)
    kinds = (
        [str(m.get("type", "")) for m in modules if isinstance(m, Mapping)]
        if isinstance(modules, list)
        else []
    )
    similarity = settings.get("similarity_fn_name")
    return FolderConfig(
        query_prompt=query,
        document_prompt=document,
        has_modules=isinstance(modules, list),
        normalize_module=any(k.rsplit(".", 1)[-1] == "Normalize" for k in kinds),
        similarity=str(similarity) if similarity else None,
        custom_code=custom_code(folder),
    )


def is_model_folder(folder: Path) -> bool:
    return (folder / MODULES).is_file() or (folder / "config.json").is_file()


def folder_revision(folder: Path) -> str:
    """Content hash of every file in a local model folder (names and bytes): ``sha256:...``."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()}"
