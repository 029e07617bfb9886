"""``sample``: BEIR SciFact shipped inside the package (gzip-compressed; see resources/scifact/SOURCE.md)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from indexer.data import _beir
from indexer.data._model import Dataset
from indexer.data._overlay import overlay_root

NAME = "sample"
DESCRIPTION = "SciFact (BEIR), bundled; test split for evaluation, train split for tuning"


def root() -> Path:
    return Path(str(files("indexer.data").joinpath("resources", "scifact")))


def load(*, split: str | None = None) -> Dataset:
    folder = root()
    return _beir.load(
        folder,
        name=NAME,
        source=f"bundled SciFact ({folder})",
        split=split,
        expansion_roots=(overlay_root(NAME),),
    )
