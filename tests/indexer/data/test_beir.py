"""The BEIR folder layout, on the shared real SciFact."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from base import DataError
from indexer.data import load_dataset
from tests._support import SCIFACT


def _tsv_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            out.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return out


def test_scifact_test_split() -> None:
    ds = load_dataset(str(SCIFACT))
    assert (ds.format, ds.split, ds.splits) == ("beir", "test", ("test", "train"))
    assert ds.corpus_size == 5183
    assert ds.qrels == _tsv_qrels(SCIFACT / "qrels" / "test.tsv")
    assert len(ds.queries) == 300 and ds.judgments == 339
    assert ds.unjudged_queries == 1109 - 300
    assert ds.warnings == ()


def test_scifact_train_split_via_with_split() -> None:
    train = load_dataset(str(SCIFACT)).with_split("train")
    assert train.split == "train"
    assert train.qrels == _tsv_qrels(SCIFACT / "qrels" / "train.tsv")
    assert len(train.queries) == 809


def test_corpus_streams_titles_and_ids() -> None:
    ds = load_dataset(str(SCIFACT))
    first = next(ds.iter_corpus())
    assert first.id == "4983" and first.title.startswith("Microstructural development")
    assert sum(1 for _ in ds.iter_corpus()) == 5183  # each call re-reads from disk


def test_corpus_changed_after_validation_is_refused(make_beir: Callable[..., Path]) -> None:
    folder = make_beir()
    ds = load_dataset(str(folder))
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"_id": "d4", "text": "unvalidated"}\n')
    with pytest.raises(DataError, match="changed on disk since it was validated"):
        list(ds.iter_corpus())
