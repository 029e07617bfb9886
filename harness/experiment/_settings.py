"""The searches of ``[sweep.params]``: each swept arm once per distinct setting, checkpointed.

Every body of every setting is rendered before the first search is sent (an unknown variable or
a body that is not JSON fails before any work). Each setting's run is written to
``RUN_DIR/sweep/<dataset>/<split>/<arm>-<digest>.json`` (with the arm and the setting) as soon as
it is searched; the digest covers the setting and the run's configuration hash (templates, indices,
data, engine, model), so the same command resumes without searching it again while a changed
experiment never reads another's runs, and every configuration
of the joint grid reuses it: the param grid costs settings x queries searches, whatever the
size of the fusion grid.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console

from harness._errors import RunError
from harness._search import ArmRun, Request
from harness.experiment._config import ExperimentConfig
from harness.experiment._execute import ArmSite, render_requests, search_arm
from harness.strategies import SearchContext, TemplateArm
from harness.sweep import ParamGrid, Setting, variant_key
from indexer import ConfigError, Dataset, read_json, slug, write_json_atomic


@dataclass(slots=True)
class SettingRuns:
    """Every swept arm's run per setting (by :func:`~harness.sweep.variant_key`), and what it cost."""

    runs: dict[str, ArmRun] = field(default_factory=dict)
    searches: int = 0  # sent to the engine by this call
    loaded: int = 0  # settings read back from their checkpoints


def checkpoint_path(folder: Path, arm: str, setting: Setting, config_hash: str) -> Path:
    digest = hashlib.sha256(json.dumps([config_hash, arm, setting]).encode()).hexdigest()[:12]
    return folder / f"{slug(arm, fallback='arm')}-{digest}.json"


def _pending(
    exp: ExperimentConfig,
    params: ParamGrid,
    ds: Dataset,
    sites: Mapping[str, ArmSite],
    folder: Path,
    config_hash: str,
) -> tuple[SettingRuns, list[tuple[Setting, TemplateArm, Path, list[Request]]]]:
    """The checkpointed settings' runs, and every other setting's arm and bodies (all rendered)."""
    by_name = {a.name: a for a in exp.arms}
    ctx = SearchContext(depth=exp.run.depth, num_candidates=exp.run.num_candidates)
    done, todo = SettingRuns(), []
    for name in params.arms:
        arm = by_name[name]
        for setting in params.settings(name):
            path = checkpoint_path(folder, name, setting, config_hash)
            if path.is_file():
                done.runs[variant_key(name, setting)] = ArmRun.from_dict(read_json(path))
                done.loaded += 1
                continue
            variant = replace(arm, params={**arm.params, **dict(setting)})
            todo.append((setting, variant, path, render_requests(variant, sites[name], ds, ctx)))
    return done, todo


def search_settings(
    exp: ExperimentConfig,
    params: ParamGrid,
    ds: Dataset,
    sites: Mapping[str, ArmSite],
    folder: Path,
    config_hash: str,
    console: Console,
) -> SettingRuns:
    """Each swept arm's run on ``ds`` under each of its settings: from its checkpoint, else searched once."""
    done, todo = _pending(exp, params, ds, sites, folder, config_hash)
    for setting, variant, path, requests in todo:
        key = variant_key(variant.name, setting)
        try:
            result = search_arm(variant, sites[variant.name], requests, exp, console)
        except (RunError, ConfigError) as exc:
            raise type(exc)(f"sweep setting {key}: {exc}") from None
        record: dict[str, Any] = {"arm": variant.name, "params": dict(setting), **result.to_dict()}
        write_json_atomic(path, record)
        done.runs[key] = result
        done.searches += len(requests)
    return done
