"""``source = "files"``: the judgments the dataset came with (its qrels, or ``data.qrels``), as they are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.judgments.sources._base import Setting, Source


@dataclass(frozen=True, slots=True)
class Files(Source):
    """The dataset's own judgments: no keys, nothing done."""

    name = "files"
    doc = "the dataset's qrels, or data.qrels"
    labels = False

    @classmethod
    def from_settings(cls, values: Mapping[str, Setting]) -> Files:
        return cls()
