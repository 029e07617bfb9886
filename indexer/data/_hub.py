"""``r2med`` / ``r2med/<Name>``: the eight R2MED datasets from the Hugging Face hub.

Each dataset is the hub dataset repository ``R2MED/<Name>``, fetched with
``huggingface_hub.snapshot_download`` into the standard cache at a pinnable
revision and then read through the R2MED-folder code path.  A local folder laid
out like the hub repository is used instead when ``$R2MED_DATA_DIR/<Name>``
exists; a cached snapshot is used without touching the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from indexer._env import from_env
from indexer._exceptions import ConfigError, DataError
from indexer.data import _r2med
from indexer.data._model import Dataset

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
    """Where a hub dataset's files are on this machine."""

    root: Path
    source: str


def canonical(name: str) -> str:
    """``biology``, ``r2med/Biology`` or ``R2MED/Biology`` -> ``Biology``."""
    bare = name.split("/", 1)[1] if "/" in name else name
    for known in R2MED_NAMES:
        if known.lower() == bare.lower():
            return known
    raise ConfigError(f'expected one of the R2MED datasets {", ".join(R2MED_NAMES)}, found "{name}"')


def repo_id(name: str) -> str:
    return f"{HUB_ORG}/{canonical(name)}"


def _data_dir_folder(name: str) -> Path | None:
    base = from_env("data").get("r2med_dir")
    if not base:
        return None
    return Path(base).expanduser() / name


def locate_cached(name: str, revision: str | None = None, *, cache_dir: Path | None = None) -> Located | None:
    """The local copy of ``R2MED/<name>`` if there is one; never touches the network."""
    from huggingface_hub import snapshot_download

    name = canonical(name)
    folder = _data_dir_folder(name)
    if folder is not None and folder.is_dir():
        return Located(folder, f"{folder} (${DATA_DIR_ENV})")
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
    return Located(root, f"hf://datasets/{repo_id(name)}@{root.name}")


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
    found = locate_cached(name, revision, cache_dir=cache_dir)
    if found is not None:
        return found
    rev = revision or "main"
    if not download or constants.HF_HUB_OFFLINE:
        raise DataError(
            f"{repo_id(name)} (revision {rev}) is not on this machine and downloading is disabled "
            f"(HF_HUB_OFFLINE or offline use). " + offline_instructions(name)
        )
    try:
        path = snapshot_download(
            repo_id=repo_id(name),
            repo_type="dataset",
            revision=revision,
            cache_dir=cache_dir,
            allow_patterns=ALLOW_PATTERNS,
        )
    except Exception as exc:  # network, auth, unknown revision: all end the same way for the user
        raise DataError(
            f"could not download {repo_id(name)} (revision {rev}) from the Hugging Face hub and no cached copy "
            f"was found. " + offline_instructions(name)
        ) from exc
    root = Path(path)
    return Located(root, f"hf://datasets/{repo_id(name)}@{root.name}")


def load(
    name: str, *, split: str | None = None, revision: str | None = None, cache_dir: Path | None = None
) -> Dataset:
    """Locate (or fetch) ``R2MED/<name>`` and load it through the R2MED-folder code path."""
    located = locate(name, revision, cache_dir=cache_dir)
    return _r2med.load(located.root, name=f"{PREFIX}/{canonical(name)}", source=located.source, split=split)
