"""``source = "files"``: the judgments the dataset came with (its qrels, or ``data.qrels``), as they are."""

from __future__ import annotations

from dataclasses import dataclass

from harness.judgments.sources._base import Source


@dataclass(frozen=True, slots=True)
class Files(Source):
    """The dataset's own judgments: no keys, nothing done."""

    name = "files"
    doc = "the dataset's qrels, or data.qrels"
    labels = False
