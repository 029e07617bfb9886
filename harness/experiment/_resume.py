"""Resuming an experiment: each template arm's finished run is checkpointed in the run directory.

``RUN_DIR/arms/<dataset>/<split>/<arm>-<digest>.json`` holds one arm's run and its target (the
judged documents its index lacks), written atomically as soon as the arm's searches are done;
``RUN_DIR/arms/config.json`` names the configuration hash that wrote them. The same command with
the same ``--output`` reuses every finished arm (searching only the others); another experiment
(another configuration hash) in that directory is refused before anything is searched or written.
The run directory's final files (results.json, the TREC runs, the report) are still written only
once every arm has its run.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import asdict
from pathlib import Path

from harness._errors import RunError
from harness._search import ArmRun
from harness.results import ArmTarget, Manifest
from harness.run import MANIFEST_FILE
from indexer import ConfigError, Dataset, read_json, slug, write_json_atomic

ARMS_DIR = "arms"
MARKER = "config.json"
#: an engine's answer that a body is wrong (not 408 or 429): rerunning the same experiment fails the same way
_REFUSED = re.compile(r"HTTP 4(?!08|29)\d\d")


def previous_hash(run_dir: Path) -> str | None:
    """The configuration hash of what ``run_dir`` holds: a finished run's manifest, else its checkpoints'."""
    if (run_dir / MANIFEST_FILE).is_file():
        return Manifest.load(run_dir / MANIFEST_FILE).config_hash
    marker = run_dir / ARMS_DIR / MARKER
    return str(read_json(marker)["config_hash"]) if marker.is_file() else None


def refuse_other(run_dir: Path, config_hash: str) -> None:
    """A run directory is resumed only by the same experiment (the same configuration hash)."""
    old = previous_hash(run_dir)
    if old is not None and old != config_hash:
        raise ConfigError(
            f"{run_dir} holds a run of another experiment (config hash {old}, this one {config_hash}); "
            "choose another --output"
        )


def discard_if_bad_input(run_dir: Path, existed: bool, exc: BaseException) -> None:
    """A run that created ``run_dir`` and failed on a bad input (the same command fails the same way, and
    the fix changes the configuration hash) leaves no run directory behind; a lost engine, a timeout or an
    interruption keeps its checkpoints for the same command to resume from."""
    bad = isinstance(exc, ConfigError) or (isinstance(exc, RunError) and _REFUSED.search(str(exc)))
    if bad and not existed and run_dir.is_dir():
        shutil.rmtree(run_dir)


class ArmCheckpoints:
    """The finished template arms of one dataset split, under one configuration hash."""

    def __init__(self, run_dir: Path, ds: Dataset, config_hash: str) -> None:
        self.root = run_dir / ARMS_DIR
        self.folder = self.root / slug(ds.name, fallback="dataset") / (ds.split or "default")
        self.config_hash = config_hash
        self.reused = 0

    def _path(self, arm: str) -> Path:
        digest = hashlib.sha256(arm.encode()).hexdigest()[:8]
        return self.folder / f"{slug(arm, fallback='arm')}-{digest}.json"

    def get(self, arm: str) -> tuple[ArmRun, ArmTarget] | None:
        path = self._path(arm)
        if not path.is_file():
            return None
        data = read_json(path)
        if data.get("config_hash") != self.config_hash or data.get("arm") != arm:
            return None
        target = dict(data["target"])
        target.update(inputs=tuple(target["inputs"]), missing_judged=tuple(target["missing_judged"]))
        self.reused += 1
        return ArmRun.from_dict(data), ArmTarget(**target)

    def put(self, arm: str, result: ArmRun, target: ArmTarget) -> None:
        marker = self.root / MARKER
        if not marker.is_file():
            write_json_atomic(marker, {"config_hash": self.config_hash})
        record = {"arm": arm, "config_hash": self.config_hash, "target": asdict(target), **result.to_dict()}
        write_json_atomic(self._path(arm), record)
