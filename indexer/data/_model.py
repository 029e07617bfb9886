"""Records of the data model: documents, problems, fingerprints and the loaded dataset."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum

from base import DataError
from indexer.data._fingerprint import combine, qrels_hash


class Severity(StrEnum):
    """How bad a validation problem is: errors stop the load, warnings are counted."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation finding, located at ``file:line`` (``line`` is None for whole-file problems)."""

    severity: Severity
    code: str
    file: str
    line: int | None
    message: str

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def __str__(self) -> str:
        return f"{self.location}: {self.severity.value}: {self.message}"


@dataclass(frozen=True, slots=True)
class Document:
    """One corpus record."""

    id: str
    text: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """Content hashes (sha256 hex), each stable under reordering of the records.

    ``combined`` covers corpus, queries and qrels; ``expansions`` is kept apart
    because only generation-augmented runs depend on it.
    """

    corpus: str
    queries: str
    qrels: str
    expansions: str
    combined: str

    @property
    def short(self) -> str:
        return self.combined[:12]


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """Figures gathered while the corpus was validated (one streaming pass)."""

    documents: int
    words: int
    with_title: int


@dataclass(frozen=True, slots=True)
class ExpansionInfo:
    """What an expansion set carries besides its texts.

    ``reasoning``: qid -> the reasoning trace a file keeps apart from ``hy_doc`` (files written by
    ``harness expand`` for reasoning models); ``prompt_sha256``: the prompt hashes its records name.
    """

    file: str
    reasoning: dict[str, str] = field(default_factory=dict)
    prompt_sha256: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Dataset:
    """A validated dataset: judged queries, qrels and expansions in memory, the corpus on disk.

    ``queries`` holds only the queries of the chosen split that have judgments;
    ``unjudged_queries`` counts the others found in the query file.
    ``expansions`` maps ``(method, llm)`` to ``qid -> generated text`` for those
    same queries, and ``expansion_info`` what else each set carries (reasoning, prompt hashes).
    :meth:`iter_corpus` streams the corpus from disk on each call.
    """

    name: str
    split: str | None
    source: str
    format: str
    corpus_stats: CorpusStats
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    expansions: dict[tuple[str, str], dict[str, str]]
    fingerprint: Fingerprint
    warnings: tuple[Problem, ...]
    unjudged_queries: int
    splits: tuple[str, ...]
    _corpus: Callable[[], Iterator[Document]] = field(repr=False, compare=False)
    _reload: Callable[[str | None], Dataset] = field(repr=False, compare=False)
    expansion_info: dict[tuple[str, str], ExpansionInfo] = field(default_factory=dict, compare=False)
    revision: str | None = None  # the hub revision loaded (r2med/<Name>); None for folders and the sample

    @property
    def corpus_size(self) -> int:
        return self.corpus_stats.documents

    @property
    def judgments(self) -> int:
        return sum(len(docs) for docs in self.qrels.values())

    def iter_corpus(self) -> Iterator[Document]:
        """Stream every document from disk (the files are re-read on each call)."""
        return self._corpus()

    def with_split(self, split: str | None) -> Dataset:
        """The same source loaded (and validated) for another split, e.g. ``train`` for tuning."""
        if split == self.split:
            return self
        return self._reload(split)

    def with_qrels(self, qrels: dict[str, dict[str, int]]) -> Dataset:
        """The same dataset judged by ``qrels`` (for the same queries), its fingerprint updated to match.

        Two runs scored with the same judgments share a fingerprint; a run re-scored with more
        judgments no longer shares one with a run scored with fewer.
        """
        unknown = sorted(set(qrels) - set(self.queries))
        if unknown:
            raise DataError(f"{self.name}: judgments for queries the dataset does not hold: {unknown[:5]}")
        parts = {
            "corpus": self.fingerprint.corpus,
            "queries": self.fingerprint.queries,
            "qrels": qrels_hash(qrels),
        }
        fingerprint = Fingerprint(expansions=self.fingerprint.expansions, combined=combine(**parts), **parts)
        return replace(self, qrels=qrels, fingerprint=fingerprint)

    def warning_summary(self, examples: int = 1) -> list[str]:
        """One line per kind of warning: its count and the first location(s)."""
        return summarise(self.warnings, examples)


def summarise(problems: tuple[Problem, ...] | list[Problem], examples: int = 1) -> list[str]:
    """Group problems by code: ``"12 x unjudged-query (first: query.jsonl:5: ...)"``."""
    counts = Counter(p.code for p in problems)
    first: dict[str, list[Problem]] = {}
    for p in problems:
        first.setdefault(p.code, [])
        if len(first[p.code]) < examples:
            first[p.code].append(p)
    lines = []
    for code, n in counts.most_common():
        shown = "; ".join(f"{p.location}: {p.message}" for p in first[code])
        lines.append(f"{n} x {code} (first: {shown})")
    return lines
