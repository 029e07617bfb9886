"""What a dataset folder format offers; each format module implements it and registers once."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from indexer.data._model import Dataset


class DatasetFormat(Protocol):
    """A folder layout (R2MED, BEIR): recognise it, load it validated, and say where its judgments are."""

    @property
    def name(self) -> str: ...

    @property
    def layout(self) -> str:
        """The files the format expects, for messages (``corpus.jsonl with queries.jsonl and ...``)."""
        ...

    def detect(self, root: Path) -> bool:
        """Whether ``root`` holds a dataset in this format."""
        ...

    def load(self, root: Path, *, name: str, source: str, split: str | None = None) -> Dataset:
        """The validated dataset (a DataError naming every problem at file:line otherwise)."""
        ...

    def qrels_file(self, root: Path, split: str | None) -> str:
        """The judgments file of ``split`` (relative to ``root``), for quick counts."""
        ...
