"""Model folders for the "your model" tests, all made from the packaged all-MiniLM-L6-v2 (no hub here).

* :func:`renamed_minilm`: a copy under another name, optionally with prompts or ``auto_map`` in its config;
* :func:`into_hub_cache`: a folder laid out as the Hugging Face cache holds a hub model
  (``models--org--name/blobs/<sha256>``, ``snapshots/<commit>/<file>`` linked to the blobs, ``refs/<ref>``),
  exactly what ``hf download`` leaves, so resolving a hub id offline is tested without the network.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from indexer.embed import bundled_model_path

#: a stand-in for code shipped with a model: a BertModel subclass that changes nothing (no remote code runs)
CUSTOM_MODELING = '''from transformers import BertModel


class StandInBertModel(BertModel):
    """Written by the test suite: loading it proves the trust_remote_code path, computing as BERT does."""
'''


def _edit_json(path: Path, change: Mapping[str, Any]) -> None:
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data.update(change)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def renamed_minilm(
    dest: Path,
    *,
    prompts: Mapping[str, str] | None = None,
    st_config: Mapping[str, Any] | None = None,
    auto_map: Mapping[str, str] | None = None,
    plain: bool = False,
) -> Path:
    """A copy of the packaged MiniLM at ``dest``: ``prompts`` (and other ``st_config`` keys) in its
    config_sentence_transformers.json, ``auto_map`` in its config.json (with :data:`CUSTOM_MODELING` as the
    module it names), or ``plain`` (no sentence-transformers files: a bare transformers folder)."""
    shutil.copytree(bundled_model_path(), dest)
    if prompts is not None or st_config:
        _edit_json(
            dest / "config_sentence_transformers.json", {**(st_config or {}), "prompts": prompts or {}}
        )
    if auto_map is not None:
        _edit_json(dest / "config.json", {"auto_map": dict(auto_map)})
        for target in auto_map.values():
            (dest / f"{target.rsplit('.', 1)[0]}.py").write_text(CUSTOM_MODELING, encoding="utf-8")
    if plain:
        for name in ("modules.json", "config_sentence_transformers.json", "sentence_bert_config.json"):
            (dest / name).unlink()
        for folder in ("1_Pooling", "2_Normalize"):
            shutil.rmtree(dest / folder, ignore_errors=True)
    return dest


def into_hub_cache(
    cache: Path, repo_id: str, source: Path, commit: str, refs: Sequence[str] = ("main",)
) -> Path:
    """``source``'s files as the hub cache holds ``repo_id`` at ``commit``; returns the snapshot folder."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        data = path.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        link = snapshot / path.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (repo / "refs").mkdir(exist_ok=True)
    for ref in refs:
        (repo / "refs" / ref).write_text(commit, encoding="utf-8")
    return snapshot
