"""LameR's first stage: BM25 over the dataset's own index, run by the harness itself.

The index is built through the indexer when it is missing (text side only; an existing index with
vectors is reused as it is). The searches go through the same msearch path and ``Lexical``
strategy as ``harness run lexical``, so the passages LameR sees are exactly that arm's top k.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from harness._search import SearchOptions, run_searches
from harness.eval import rank
from harness.strategies import Lexical, QueryInput, SearchContext
from indexer import Backend, Dataset, IndexOptions, build_index

PASSAGE_WORDS = 512  # each passage is cut to this many words
NO_PASSAGES = "(the search returned no passages)"


@dataclass(frozen=True, slots=True)
class FirstStage:
    """The passages shown to the model per query, and how they were found."""

    passages: dict[str, str]  # qid -> numbered passages, ready for the {passages} placeholder
    top: dict[str, list[str]]  # qid -> document ids, best first
    index: str
    depth: int
    bm25: str

    def describe(self) -> dict[str, Any]:
        ranking = json.dumps(self.top, sort_keys=True).encode("utf-8")
        return {
            "arm": "lexical",
            "bm25": self.bm25,
            "depth": self.depth,
            "index": self.index,
            "passage_words": PASSAGE_WORDS,
            "ranking_sha256": hashlib.sha256(ranking).hexdigest(),
        }


def format_passages(texts: list[str]) -> str:
    """``[1] ...`` one per line, newlines folded, each cut to :data:`PASSAGE_WORDS` words."""
    if not texts:
        return NO_PASSAGES
    lines = []
    for number, text in enumerate(texts, start=1):
        words = text.split()
        lines.append(f"[{number}] " + " ".join(words[:PASSAGE_WORDS]))
    return "\n".join(lines)


def _ranked(run: dict[str, float], depth: int) -> list[str]:
    return [doc for doc, _ in rank(run)[:depth]]


def first_stage(
    client: Backend,
    dataset: Dataset,
    *,
    depth: int = 10,
    bm25: str = "es",
    progress: bool = True,
    console: Console | None = None,
) -> FirstStage:
    """Top-``depth`` BM25 passages for every query of ``dataset`` (building its index if needed)."""
    summary = build_index(client, dataset, [], IndexOptions(progress=progress), console=console)
    strategy = Lexical(SearchContext(depth=depth, bm25=bm25))
    requests = [
        ("lexical", qid, strategy.body(QueryInput(qid, text))) for qid, text in dataset.queries.items()
    ]
    result = run_searches(client, summary.index, requests, SearchOptions())["lexical"]
    top = {qid: _ranked(result.run.get(qid, {}), depth) for qid in dataset.queries}
    wanted = {doc for docs in top.values() for doc in docs}
    texts: dict[str, str] = {}
    for doc in dataset.iter_corpus():
        if doc.id in wanted:
            texts[doc.id] = " ".join(part for part in (doc.title.strip(), doc.text.strip()) if part)
    passages = {qid: format_passages([texts[d] for d in docs if d in texts]) for qid, docs in top.items()}
    return FirstStage(passages=passages, top=top, index=summary.index, depth=depth, bm25=bm25)
