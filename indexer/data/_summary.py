"""Descriptive statistics of a loaded dataset (for ``harness datasets show``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from statistics import mean
from typing import Any

from indexer.data._model import Dataset


def _avg_words(texts: list[str]) -> float:
    return round(mean(len(t.split()) for t in texts), 2) if texts else 0.0


def describe(dataset: Dataset) -> dict[str, Any]:
    """Counts, average lengths in words, judgments per query, grades, expansions, fingerprint, warnings."""
    per_query = [len(docs) for docs in dataset.qrels.values()]
    grades = Counter(grade for docs in dataset.qrels.values() for grade in docs.values())
    stats = dataset.corpus_stats
    return {
        "name": dataset.name,
        "source": dataset.source,
        "format": dataset.format,
        "split": dataset.split,
        "splits": list(dataset.splits),
        "documents": stats.documents,
        "documents_with_title": stats.with_title,
        "avg_document_words": round(stats.words / stats.documents, 2) if stats.documents else 0.0,
        "queries": len(dataset.queries),
        "unjudged_queries": dataset.unjudged_queries,
        "avg_query_words": _avg_words(list(dataset.queries.values())),
        "judgments": dataset.judgments,
        "judgments_per_query": {
            "mean": round(mean(per_query), 3) if per_query else 0.0,
            "min": min(per_query, default=0),
            "max": max(per_query, default=0),
        },
        "grades": {str(g): n for g, n in sorted(grades.items())},
        "expansions": [
            {
                "method": method,
                "llm": llm,
                "queries": len(texts),
                "avg_words": _avg_words(list(texts.values())),
            }
            for (method, llm), texts in sorted(dataset.expansions.items())
        ],
        "fingerprint": asdict(dataset.fingerprint),
        "warnings": len(dataset.warnings),
        "warning_summary": dataset.warning_summary(),
    }
