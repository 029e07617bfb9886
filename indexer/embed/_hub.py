"""Hub model ids (``org/name`` or ``org/name@REVISION``) resolved to a commit and a folder of files.

The Hugging Face cache lays a repository out as::

    <cache>/models--org--name/refs/<branch or tag>     the commit it points at (one line)
    <cache>/models--org--name/snapshots/<commit>/...    the files at that commit

Offline (``HF_HUB_OFFLINE=1``, or the hub unreachable) a revision is resolved through ``refs/`` and the
model is loaded from its snapshot folder; a model that is not there is an error that says how to place it.
Online, the hub says which commit the revision is now, and only the small configuration files are fetched
here (the weights come when the model is loaded, at that same commit). The cache folder is read from the
environment at each call (``HF_HUB_CACHE``, ``HUGGINGFACE_HUB_CACHE``, ``HF_HOME``, ``XDG_CACHE_HOME``), as
``huggingface_hub`` reads it at import.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from base import EmbeddingError

DEFAULT_REVISION = "main"
#: what resolving a model online fetches: its settings (and any code of its own, to be read), never its weights
CONFIG_FILES = [
    "*.py",
    "modules.json",
    "config.json",
    "config_sentence_transformers.json",
    "sentence_bert_config.json",
    "tokenizer_config.json",
    "*/config.json",
]
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SNAPSHOT = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/(?P<commit>[0-9a-f]{40})/?$")
_TRUE = {"1", "ON", "YES", "TRUE"}


@dataclass(frozen=True, slots=True)
class HubModel:
    """A hub model at one commit; ``folder`` holds its files (all of them when ``complete``)."""

    repo_id: str
    commit: str
    folder: Path
    complete: bool  # False: only the configuration files were fetched (the weights come at load)


def parse_hub_id(name: str) -> tuple[str, str] | None:
    """``org/name[@REVISION]`` -> ``(repo_id, revision)``; ``None`` if ``name`` is not shaped like one."""
    repo, _, revision = name.strip().partition("@")
    if not _HUB_ID.fullmatch(repo) or ".." in repo:
        return None
    return repo, revision.strip() or DEFAULT_REVISION


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache folder, from the environment as it is now."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.path.expandvars(os.environ[var])).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface"
    )
    return Path(os.path.expandvars(home)).expanduser() / "hub"


def hub_offline() -> bool:
    """True when the hub must not be contacted (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().upper() in _TRUE


def repo_folder(repo_id: str, cache: Path) -> Path:
    return cache / ("models--" + repo_id.replace("/", "--"))


def snapshot_repo(folder: Path) -> tuple[str, str] | None:
    """``(repo_id, commit)`` when ``folder`` is a snapshot inside a hub cache, else ``None``."""
    found = _SNAPSHOT.search(folder.as_posix())
    return (f"{found['org']}/{found['name']}", found["commit"]) if found else None


def cached_commit(repo_id: str, revision: str, cache: Path) -> str | None:
    """The commit ``revision`` names in the local cache (a commit itself, or a ref there), if any."""
    if _COMMIT.fullmatch(revision):
        return revision
    ref = repo_folder(repo_id, cache) / "refs" / revision
    try:
        commit = ref.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return commit if _COMMIT.fullmatch(commit) else None


def cached_revisions(repo_id: str, cache: Path) -> dict[str, str]:
    """Every ref of ``repo_id`` in the cache and its commit, plus snapshots no ref names (by commit)."""
    root = repo_folder(repo_id, cache)
    refs = {}
    if (root / "refs").is_dir():
        for ref in sorted(p for p in (root / "refs").rglob("*") if p.is_file()):
            refs[ref.relative_to(root / "refs").as_posix()] = ref.read_text(encoding="utf-8").strip()
    snapshots = root / "snapshots"
    for snap in sorted(snapshots.iterdir()) if snapshots.is_dir() else []:
        if snap.is_dir() and snap.name not in refs.values():
            refs[snap.name] = snap.name
    return refs


def placement_help(repo_id: str, revision: str, cache: Path) -> str:
    """How to put ``repo_id`` at ``revision`` on a machine that cannot reach the hub."""
    others = cached_revisions(repo_id, cache)
    held = (
        f" The cache holds it at {', '.join(f'{r} ({c[:12]})' if r != c else c for r, c in others.items())}: "
        f"pass --embed-model {repo_id}@REVISION to use one of those."
        if others
        else ""
    )
    return (
        f"{held} To place it: on a machine with internet access run "
        f"`hf download {repo_id} --revision {revision}` (older huggingface_hub: `huggingface-cli download "
        f"{repo_id} --revision {revision}`), then copy its cache folder {repo_folder(repo_id, cache).name}/ "
        f"(refs/, snapshots/ and blobs/) into {cache} here (or point HF_HUB_CACHE at the copy); or pass the "
        "model's own folder: --embed-model /path/to/folder."
    )


def _from_cache(repo_id: str, revision: str, cache: Path) -> HubModel | None:
    commit = cached_commit(repo_id, revision, cache)
    if commit is None:
        return None
    folder = repo_folder(repo_id, cache) / "snapshots" / commit
    return HubModel(repo_id, commit, folder, complete=True) if folder.is_dir() else None


def _fetch_configs(repo_id: str, revision: str, cache: Path, hint: str) -> HubModel:
    from huggingface_hub import snapshot_download

    try:
        path = Path(
            snapshot_download(repo_id, revision=revision, cache_dir=cache, allow_patterns=CONFIG_FILES)
        )
    except Exception as exc:  # network, auth, unknown repository or revision
        raise EmbeddingError(
            f"embedding model {repo_id!r} (revision {revision}) is not in the local Hugging Face cache at "
            f"{cache} and the hub could not be asked for it{hint}.{placement_help(repo_id, revision, cache)}"
        ) from exc
    if not _COMMIT.fullmatch(path.name):
        raise EmbeddingError(
            f"the hub returned {path} for {repo_id!r}: expected a snapshot folder named by commit"
        )
    return HubModel(repo_id, path.name, path, complete=False)


def resolve_hub(repo_id: str, revision: str = DEFAULT_REVISION, *, hint: str = "") -> HubModel:
    """``repo_id`` at ``revision``: from the local cache when offline (or when it holds that commit), else
    its configuration from the hub. ``hint`` goes into the error (e.g. "; no local folder X exists either")."""
    cache = hub_cache_dir()
    if hub_offline() or _COMMIT.fullmatch(revision):
        found = _from_cache(repo_id, revision, cache)
        if found is not None:
            return found
    if hub_offline():
        raise EmbeddingError(
            f"embedding model {repo_id!r} at revision {revision} is not in the local Hugging Face cache at "
            f"{cache}, and the hub is offline (HF_HUB_OFFLINE=1){hint}.{placement_help(repo_id, revision, cache)}"
        )
    return _fetch_configs(repo_id, revision, cache, hint)
