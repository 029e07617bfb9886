"""Fingerprints: stable under line reordering, sensitive to content."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from indexer.data import load_dataset


def _reverse_lines(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(reversed(lines)), encoding="utf-8")


def test_reordering_lines_keeps_every_fingerprint(make_r2med: Callable[..., Path]) -> None:
    folder = make_r2med()
    before = load_dataset(str(folder)).fingerprint
    for rel in ("corpus.jsonl", "query.jsonl", "qrels.jsonl", "hyde/m1/query_with_hydoc.jsonl"):
        _reverse_lines(folder / rel)
    assert load_dataset(str(folder)).fingerprint == before


def test_a_changed_document_changes_corpus_and_combined_only(make_r2med: Callable[..., Path]) -> None:
    folder = make_r2med()
    before = load_dataset(str(folder)).fingerprint
    path = folder / "corpus.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("gamma", "gamma!"), encoding="utf-8")
    after = load_dataset(str(folder)).fingerprint
    assert after.corpus != before.corpus and after.combined != before.combined
    assert (after.queries, after.qrels, after.expansions) == (before.queries, before.qrels, before.expansions)


def test_a_changed_grade_changes_qrels(make_r2med: Callable[..., Path]) -> None:
    folder = make_r2med()
    before = load_dataset(str(folder)).fingerprint
    path = folder / "qrels.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace('"score": 2', '"score": 1'), encoding="utf-8")
    after = load_dataset(str(folder)).fingerprint
    assert after.qrels != before.qrels and after.corpus == before.corpus
