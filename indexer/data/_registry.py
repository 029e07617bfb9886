"""Resolving ``--dataset`` specs: named sources and folder formats, each chosen through a registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from base import ConfigError, DataError
from indexer.data import _beir, _hub, _r2med, _sample
from indexer.data._format import DatasetFormat
from indexer.data._model import Dataset
from indexer.data._overlay import overlay_root
from indexer.data._validate import find_file

# Folder formats, tried in this order by auto-detection.
FORMATS: dict[str, DatasetFormat] = {f.name: f for f in (_r2med.R2MED_FORMAT, _beir.BEIR_FORMAT)}

# Named sources: spec -> loader(split, revision).
NamedLoader = Callable[[str | None, str | None], Dataset]
NAMED: dict[str, NamedLoader] = {
    _sample.NAME: lambda split, revision: _sample.load(split=split),
}


def resolve_specs(spec: str) -> list[str]:
    """Expand a ``--dataset`` value: ``r2med`` -> the eight ``r2med/<Name>``; commas separate several."""
    out: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part.lower() == _hub.PREFIX:
            out.extend(f"{_hub.PREFIX}/{name}" for name in _hub.R2MED_NAMES)
        elif part.lower().startswith(_hub.PREFIX + "/") and not Path(part).exists():
            out.append(f"{_hub.PREFIX}/{_hub.canonical(part)}")
        else:
            out.append(part)
    if not out:
        raise ConfigError(f'expected a dataset name or folder, found "{spec}"')
    return out


def detect_format(root: Path) -> str:
    for name, module in FORMATS.items():
        if module.detect(root):
            return name
    raise DataError(
        f"{root} is not a dataset folder: expected {' or '.join(f.layout for f in FORMATS.values())}, found "
        + (", ".join(sorted(p.name for p in root.iterdir())) or "an empty folder")
    )


def load_folder(path: Path, *, split: str | None = None) -> Dataset:
    root = path.expanduser().resolve()
    return FORMATS[detect_format(root)].load(root, name=root.name, source=str(root), split=split)


def load_dataset(spec: str, *, split: str | None = None, revision: str | None = None) -> Dataset:
    """Load and validate one dataset: ``sample``, ``r2med/<Name>`` or a folder (R2MED or BEIR layout).

    Raises DataError (with every problem) when validation finds an error; never returns a partial dataset.
    """
    key = spec.strip()
    if key in NAMED:
        return NAMED[key](split, revision)
    path = Path(key).expanduser()
    if key.lower() == _hub.PREFIX:
        raise ConfigError(
            f'"{key}" names eight datasets; expected one of them (r2med/<Name>), e.g. via resolve_specs("{key}")'
        )
    if key.lower().startswith(_hub.PREFIX + "/") and not path.exists():
        return _hub.load(key, split=split, revision=revision)
    if path.is_dir():
        return load_folder(path, split=split)
    raise ConfigError(
        f'expected a dataset ("sample", "r2med", "r2med/<Name>" with Name one of {", ".join(_hub.R2MED_NAMES)}) '
        f'or an existing folder, found "{spec}"'
    )


def expansion_root(spec: str) -> Path:
    """Where ``harness expand`` puts ``<method>/<llm>/`` expansion sets for ``spec``: inside a folder
    dataset (R2MED's layout), or in the expansions folder for the sample and ``r2med/<Name>``."""
    key = spec.strip()
    if key in NAMED:
        return overlay_root(key)
    path = Path(key).expanduser()
    if key.lower().startswith(_hub.PREFIX + "/") and not path.exists():
        return overlay_root(f"{_hub.PREFIX}/{_hub.canonical(key)}")
    if path.is_dir():
        return path.resolve()
    raise ConfigError(f'expected a dataset ("sample", "r2med/<Name>") or an existing folder, found "{spec}"')


@dataclass(frozen=True, slots=True)
class Counts:
    documents: int
    queries: int
    judgments: int


@dataclass(frozen=True, slots=True)
class KnownDataset:
    """A row of ``harness datasets list``: counts come from a quick line count, not a validation."""

    name: str
    description: str
    cached: bool
    location: str | None
    counts: Counts | None


def _count_records(root: Path, relative: str) -> int:
    file = find_file(root, relative)
    if file is None:
        return 0
    with file.open() as fh:
        return sum(1 for raw in fh if raw.strip())


def quick_counts(root: Path, split: str | None = None) -> Counts | None:
    """Documents, judged queries and judgments by counting lines (no validation; None if unreadable)."""
    try:
        qrels_name = FORMATS[detect_format(root)].qrels_file(root, split)
        file = find_file(root, qrels_name)
        qids: set[str] = set()
        judgments = 0
        if file is not None:
            import json

            with file.open() as fh:
                for n, raw in enumerate(fh):
                    text = raw.decode("utf-8").strip()
                    if not text or (n == 0 and text.startswith("query-id")):
                        continue
                    judgments += 1
                    if qrels_name.endswith(".jsonl"):
                        qids.add(str(json.loads(text).get("q_id")))
                    else:
                        qids.add(text.split()[0])
        return Counts(_count_records(root, _r2med.CORPUS), len(qids), judgments)
    except (OSError, ValueError, DataError):
        return None


def known_datasets(revision: str | None = None) -> list[KnownDataset]:
    """The bundled sample and the eight R2MED datasets, with whether each is on this machine."""
    rows = [
        KnownDataset(
            _sample.NAME, _sample.DESCRIPTION, True, str(_sample.root()), quick_counts(_sample.root())
        )
    ]
    for name in _hub.R2MED_NAMES:
        located = _hub.locate_cached(name, revision)
        rows.append(
            KnownDataset(
                f"{_hub.PREFIX}/{name}",
                f"R2MED {name} (hub {_hub.repo_id(name)})",
                located is not None,
                located.source if located else None,
                quick_counts(located.root) if located else None,
            )
        )
    return rows
