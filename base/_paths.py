"""Per-user folders: the state folder (managed nodes) and the cache folder (engine archives, embeddings)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from base._env import from_env


def is_root() -> bool:
    return os.geteuid() == 0


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if state := from_env("paths", env).get("state"):
        return Path(state).expanduser()
    if is_root():
        # /root is not traversable by the unprivileged run user
        return Path("/var/lib/r2med-harness")
    base = Path(env["XDG_STATE_HOME"]) if env.get("XDG_STATE_HOME") else Path.home() / ".local" / "state"
    return base / "r2med-harness"


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if cache := from_env("paths", env).get("cache"):
        return Path(cache).expanduser()
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "r2med-harness"
