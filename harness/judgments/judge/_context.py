"""The document fields a judge reads (``--context-fields``): from the dataset's corpus, or from the index.

One reader per source in :data:`CONTEXT_SOURCES`. The dataset's documents have ``title`` and
``text``; the index has whatever its documents hold (fetched by id with ``_mget``, any field the
source keeps: a list is joined, a number written as text). A document the source does not hold,
or whose fields are all empty, cannot be judged: it is reported, never judged on nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from base import ConfigError
from harness.judgments.judge._pairs import PairSet
from indexer import Backend

DATASET_FIELDS = ("title", "text")
DEFAULT_FIELDS = ("title", "text")
FETCH_BATCH = 500

#: doc id -> the fields, in the order asked, as (name, text)
Context = dict[str, list[tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class ContextSpec:
    """Where the judged text comes from, which fields, and how many tokens of it a judge reads."""

    source: str = "dataset"
    fields: tuple[str, ...] = DEFAULT_FIELDS
    index: str | None = None  # default: the run's index for the dataset
    max_doc_tokens: int = 512


def _from_dataset(pairs: PairSet, spec: ContextSpec, backend: Backend | None) -> Context:
    wanted = {p.doc_id for p in pairs.pairs}
    return {
        d.id: [(f, getattr(d, f)) for f in spec.fields] for d in pairs.dataset.iter_corpus() if d.id in wanted
    }


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    return "" if value is None else str(value)


def _from_index(pairs: PairSet, spec: ContextSpec, backend: Backend | None) -> Context:
    index = spec.index or pairs.index
    if backend is None or not index:
        raise ConfigError(
            "judgments.context_source index needs a cluster (connection.url) and an index (judgments.index, or the "
            "run's own index)"
        )
    if not backend.index_exists(index):
        raise ConfigError(f"--context-source index: the cluster has no index {index!r}")
    ids = sorted({p.doc_id for p in pairs.pairs})
    found: Context = {}
    for start in range(0, len(ids), FETCH_BATCH):
        sources = backend.get_sources(index, ids[start : start + FETCH_BATCH], list(spec.fields))
        for doc, source in sources.items():
            found[doc] = [(f, _text(source.get(f))) for f in spec.fields]
    return found


#: where the judged text is read from
CONTEXT_SOURCES: dict[str, Callable[[PairSet, ContextSpec, Backend | None], Context]] = {
    "dataset": _from_dataset,
    "index": _from_index,
}


def read_context(
    pairs: PairSet, spec: ContextSpec, backend: Backend | None = None
) -> tuple[Context, list[str]]:
    """The fields of every pooled document, and the documents that have none to judge on."""
    context = CONTEXT_SOURCES[spec.source](pairs, spec, backend)
    empty = sorted(
        {p.doc_id for p in pairs.pairs if not any(t.strip() for _, t in context.get(p.doc_id, []))}
    )
    return context, empty
