"""``r2med`` / ``r2med/<Name>``: the eight R2MED datasets from the Hugging Face hub.

Each dataset is the hub dataset repository ``R2MED/<Name>``, fetched with
``huggingface_hub.snapshot_download`` into the standard cache and then read
through the R2MED-folder code path. By default each is pinned to the commit MTEB
evaluates (:data:`PINNED_REVISIONS`), so two users a month apart score the same
data under the same name; ``revision="main"`` (or any commit) overrides that. A
cached snapshot is used without touching the network, but only at the revision
asked for: a snapshot at another commit is never taken for the pinned one. A
local folder laid out like the hub repository is used instead when
``$R2MED_DATA_DIR/<Name>`` exists (its revision is then unknown).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from base import ConfigError, DataError, from_env
from indexer.data import _r2med
from indexer.data._model import Dataset
from indexer.data._overlay import overlay_root

HUB_ORG = "R2MED"
PREFIX = "r2med"
DATA_DIR_ENV = "R2MED_DATA_DIR"
R2MED_NAMES: tuple[str, ...] = (
    "Biology",
    "Bioinformatics",
    "Medical-Sciences",
    "MedXpertQA-Exam",
    "MedQA-Diag",
    "PMC-Treatment",
    "PMC-Clinical",
    "IIYi-Clinical",
)
#: the hub commits MTEB pins (each repository holds corpus.jsonl, query.jsonl and qrels.jsonl at its root)
PINNED_REVISIONS: dict[str, str] = {
    "Biology": "8b9fec2db9eda4b5742d03732213fbaee8169556",
    "Bioinformatics": "6021fce366892cbfd7837fa85a4128ea93315e18",
    "Medical-Sciences": "1b48911514c80bf9182222d99752ad75e23b4b47",
    "MedXpertQA-Exam": "b457ea43db9ae5db74c3a3e5be0a213d0f85ac3a",
    "MedQA-Diag": "78b585990279cc01a493f876c1b0cf09557fba57",
    "PMC-Treatment": "53c489a44a3664ba352c07550b72b4525a5968d5",
    "PMC-Clinical": "812829522f7eaa407ef82b96717be85788a50f7e",
    "IIYi-Clinical": "974abbc9bc281c3169180a6aa5d7586cfd2f5877",
}
ALLOW_PATTERNS = [
    _r2med.CORPUS,
    _r2med.QUERIES,
    _r2med.QRELS_JSONL,
    _r2med.QRELS_TREC,
    f"*/*/{_r2med.EXPANSION_FILE}",
    "README.md",
]


@dataclass(frozen=True, slots=True)
class Located:
    """Where a hub dataset's files are on this machine, and at which commit (None: a local folder)."""

    root: Path
    source: str
    revision: str | None = None


def canonical(name: str) -> str:
    """``biology``, ``r2med/Biology`` or ``R2MED/Biology`` -> ``Biology``."""
    bare = name.split("/", 1)[1] if "/" in name else name
    for known in R2MED_NAMES:
        if known.lower() == bare.lower():
            return known
    raise ConfigError(f'expected one of the R2MED datasets {", ".join(R2MED_NAMES)}, found "{name}"')


def repo_id(name: str) -> str:
    return f"{HUB_ORG}/{canonical(name)}"


def pinned_revision(name: str) -> str:
    """The commit ``r2med/<name>`` loads when no ``--revision`` is given."""
    return PINNED_REVISIONS[canonical(name)]


def _cached_revisions(name: str, cache_dir: Path | None) -> list[str]:
    """Commits of ``R2MED/<name>`` snapshots in the hub cache (whatever revision they were fetched as)."""
    from huggingface_hub import constants

    base = Path(cache_dir) if cache_dir is not None else Path(constants.HF_HUB_CACHE)
    folder = base / f"datasets--{HUB_ORG}--{canonical(name)}" / "snapshots"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def _data_dir_folder(name: str) -> Path | None:
    base = from_env("data").get("r2med_dir")
    if not base:
        return None
    return Path(base).expanduser() / name


def locate_cached(name: str, revision: str | None = None, *, cache_dir: Path | None = None) -> Located | None:
    """The local copy of ``R2MED/<name>`` at ``revision`` (default: the pinned commit) if there is one;
    never touches the network."""
    from huggingface_hub import snapshot_download

    name = canonical(name)
    folder = _data_dir_folder(name)
    if folder is not None and folder.is_dir():
        return Located(folder, f"{folder} (${DATA_DIR_ENV}; revision not known)")
    revision = revision or pinned_revision(name)
    try:
        path = snapshot_download(
            repo_id=repo_id(name),
            repo_type="dataset",
            revision=revision,
            cache_dir=cache_dir,
            allow_patterns=ALLOW_PATTERNS,
            local_files_only=True,
        )
    except Exception:  # not cached (LocalEntryNotFoundError and kin)
        return None
    root = Path(path)
    return Located(root, f"hf://datasets/{repo_id(name)}@{root.name}", root.name)


def offline_instructions(name: str) -> str:
    files = f"{_r2med.CORPUS}, {_r2med.QUERIES} and {_r2med.QRELS_JSONL} (or {_r2med.QRELS_TREC})"
    folder = _data_dir_folder(name)
    if folder is None:
        where = f"under $R2MED_DATA_DIR/{name} (set {DATA_DIR_ENV}=DIR and create DIR/{name}/)"
    else:
        where = f"under {folder} ({DATA_DIR_ENV} is set, but that folder does not exist)"
    return (
        f"To use it offline, place {files}, plus any expansions as "
        f"<method>/<llm>/{_r2med.EXPANSION_FILE}, {where}, "
        f"or pass --dataset PATH to a folder holding those files."
    )


def locate(
    name: str, revision: str | None = None, *, cache_dir: Path | None = None, download: bool = True
) -> Located:
    """A local copy of ``R2MED/<name>``: the data folder, the cache, or a fresh download."""
    from huggingface_hub import constants, snapshot_download

    name = canonical(name)
    rev = revision or pinned_revision(name)
    found = locate_cached(name, rev, cache_dir=cache_dir)
    if found is not None:
        return found
    if not download or constants.HF_HUB_OFFLINE:
        others = [r for r in _cached_revisions(name, cache_dir) if r != rev]
        hint = (
            f"The hub cache holds {repo_id(name)} at other commits ({', '.join(others)}), which are not "
            f"used in its place; pass --revision COMMIT to use one of them. "
            if others
            else ""
        )
        pinned = " (the pinned default)" if revision is None else ""
        raise DataError(
            f"{repo_id(name)} at revision {rev}{pinned} is not on this machine and downloading is disabled "
            f"(HF_HUB_OFFLINE or offline use). " + hint + offline_instructions(name)
        )
    try:
        path = snapshot_download(
            repo_id=repo_id(name),
            repo_type="dataset",
            revision=rev,
            cache_dir=cache_dir,
            allow_patterns=ALLOW_PATTERNS,
        )
    except Exception as exc:  # network, auth, unknown revision: all end the same way for the user
        raise DataError(
            f"could not download {repo_id(name)} (revision {rev}) from the Hugging Face hub and no cached copy "
            f"was found. " + offline_instructions(name)
        ) from exc
    root = Path(path)
    return Located(root, f"hf://datasets/{repo_id(name)}@{root.name}", root.name)


def load(
    name: str, *, split: str | None = None, revision: str | None = None, cache_dir: Path | None = None
) -> Dataset:
    """Locate (or fetch) ``R2MED/<name>`` (default: at its pinned commit) and load it through the
    R2MED-folder code path, with any expansion sets ``harness expand`` wrote for it."""
    located = locate(name, revision, cache_dir=cache_dir)
    full = f"{PREFIX}/{canonical(name)}"
    dataset = _r2med.load(
        located.root, name=full, source=located.source, split=split, expansion_roots=(overlay_root(full),)
    )
    return dataclasses.replace(dataset, revision=located.revision)
