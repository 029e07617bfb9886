"""The checkpoints of a run directory: every finished piece of work is one JSON file, written atomically.

An arm's run on the evaluated split (``arms/<dataset>/<split>/<arm>.json``), the runs of a train split
(``arms/<dataset>/tune-<split>/``), a k-fold fold of the in-engine sum (``.../sum-kfold<K>-seed<S>/fold-<i>/``),
a template setting of a sweep (``sweep/<dataset>/<split>/``) and a rerank all go through one store. Each
record names the configuration hash that wrote it; a run directory is resumed only by the same
configuration (:meth:`Checkpoints.claim` refuses another one before anything is searched or written), and
a record of another hash is never read back.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from base import CapabilityMissing, ConfigError, DataError, read_json, slug, write_json_atomic
from harness._errors import RunError
from harness._search import ArmRun
from harness.results import MANIFEST_FILE, Manifest

ARMS_DIR = "arms"
#: written by experiment runs before the manifest was written at the start of every run (read, never written)
LEGACY_MARKER = "config.json"
#: an engine's answer that a body is wrong (not 408 or 429): rerunning the same command fails the same way
_REFUSED = re.compile(r"HTTP 4(?!08|29)\d\d")


def previous_hash(run_dir: Path) -> str | None:
    """The configuration hash of what ``run_dir`` holds (its manifest's, or an older run's marker's)."""
    if (run_dir / MANIFEST_FILE).is_file():
        return Manifest.load(run_dir / MANIFEST_FILE).config_hash
    marker = run_dir / ARMS_DIR / LEGACY_MARKER
    return str(read_json(marker)["config_hash"]) if marker.is_file() else None


def file_name(name: str) -> str:
    """A checkpoint's file name: the name itself when it is a plain slug, else its slug and a digest."""
    plain = slug(name, fallback="arm")
    if plain == name:
        return f"{name}.json"
    return f"{plain}-{hashlib.sha256(name.encode()).hexdigest()[:8]}.json"


class Folder:
    """The checkpoints of one folder of a run directory (one dataset split, one fold, ...)."""

    def __init__(self, store: Checkpoints, path: Path) -> None:
        self.store, self.path = store, path

    def load(self, name: str) -> dict[str, Any] | None:
        """The record of ``name`` written by this configuration, or None."""
        path = self.path / file_name(name)
        if not path.is_file():
            return None
        record = read_json(path)
        if record.get("config_hash", self.store.config_hash) != self.store.config_hash:
            return None
        if record.get("name", name) != name:
            return None
        self.store.reused += 1
        return dict(record)

    def run(self, name: str) -> ArmRun | None:
        record = self.load(name)
        return ArmRun.from_dict(record) if record is not None else None

    def save(self, name: str, result: ArmRun, **extra: Any) -> None:
        record = {"name": name, "config_hash": self.store.config_hash, **extra, **result.to_dict()}
        write_json_atomic(self.path / file_name(name), record)


class Checkpoints:
    """Every checkpoint of one run directory, under one configuration hash."""

    def __init__(self, run_dir: Path, config_hash: str) -> None:
        self.run_dir, self.config_hash = run_dir, config_hash
        self.reused = 0

    def claim(self) -> bool:
        """Refuse a run directory that holds another configuration's run; True when one of this one's is there."""
        old = previous_hash(self.run_dir)
        if old is not None and old != self.config_hash:
            raise ConfigError(
                f"{self.run_dir} holds a run of another configuration (config hash {old}, this one "
                f"{self.config_hash}); choose another output directory"
            )
        return old is not None

    def folder(self, *parts: str) -> Folder:
        return Folder(self, self.run_dir.joinpath(*parts))

    def arms(self, dataset: str, split: str | None, *more: str) -> Folder:
        """``arms/<dataset>/<split>/...``: the arms' runs of one dataset split."""
        return self.folder(ARMS_DIR, slug(dataset, fallback="dataset"), split or "default", *more)


def discard_if_bad_input(run_dir: Path, existed: bool, exc: BaseException) -> None:
    """A run that created ``run_dir`` and failed on a bad input (the same command fails the same way, and
    the fix changes the configuration hash) leaves no run directory behind; a lost engine, a timeout or an
    interruption keeps its checkpoints for the same command to resume from."""
    refused = isinstance(exc, RunError) and _REFUSED.search(str(exc))
    bad = isinstance(exc, ConfigError | DataError | CapabilityMissing) or refused
    if bad and not existed and run_dir.is_dir():
        shutil.rmtree(run_dir)


def target_record(target: Mapping[str, Any]) -> dict[str, Any]:
    """A checkpointed target read back: its lists as tuples."""
    out = dict(target)
    out.update(inputs=tuple(out.get("inputs", ())), missing_judged=tuple(out.get("missing_judged", ())))
    return out
