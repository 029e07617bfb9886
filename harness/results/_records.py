"""Typed per-query rows of a run directory: ``per_query.jsonl``, ``overlap.jsonl`` and the evaluation records.

An :class:`EvalRecord` answers, for one query in one arm: how well it did, where the
first relevant document was, which relevant documents were never retrieved (and by
which arm they were), what the top of the ranking looked like, and how it compares
with a baseline arm. The same records go to every sink (Elasticsearch for Kibana,
``records.jsonl``) and back into the HTML report and ``harness failures``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._errors import RunError
from harness.results._codec import decode, encode

PER_QUERY_FILE = "per_query.jsonl"
OVERLAP_FILE = "overlap.jsonl"
RECORDS_FILE = "records.jsonl"


def record_id(run_id: str, dataset: str, arm: str, qid: str) -> str:
    """Deterministic document id for (run, dataset, arm, query): re-writing a run overwrites, never duplicates."""
    key = "\x1f".join((run_id, dataset, arm, qid))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]


@dataclass(frozen=True, slots=True)
class QueryScores:
    """One line of ``per_query.jsonl``: every measure of one query in one arm."""

    dataset: str
    arm: str
    qid: str
    metrics: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return data


@dataclass(frozen=True, slots=True)
class PairScores:
    """One line of ``overlap.jsonl``: how much two arms agree on one query (overlap@k, RBO_ext at p)."""

    dataset: str
    arm_a: str
    arm_b: str
    qid: str
    overlap: float
    rbo: float
    k: int
    p: float

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return data


@dataclass(frozen=True, slots=True)
class QueryText:
    id: str
    text: str
    expansion: str | None = None
    reasoning: str | None = None  # a reasoning model's trace, split off the expansion and never searched with


@dataclass(frozen=True, slots=True)
class RecordMetrics:
    ndcg_at_10: float
    recall_at_100: float
    reciprocal_rank: float


@dataclass(frozen=True, slots=True)
class RelevantCounts:
    total: int
    retrieved: int
    missed: int
    retrieved_in_top_10: int


@dataclass(frozen=True, slots=True)
class MissedDoc:
    id: str
    grade: int
    title: str
    snippet: str
    retrieved_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopHit:
    rank: int
    id: str
    title: str
    score: float
    grade: int | None
    judged: bool


@dataclass(frozen=True, slots=True)
class Attribution:
    """A relevant document: which arms retrieved it, and its rank in this record's arm."""

    id: str
    grade: int
    arms: tuple[str, ...]
    rank: int | None


@dataclass(frozen=True, slots=True)
class Delta:
    baseline_arm: str
    ndcg_at_10: float | None


@dataclass(frozen=True, slots=True)
class ArmComparison:
    """The record's query in the compared arm against the baseline arm (the same for every arm)."""

    arm: str
    baseline_arm: str
    ndcg_at_10_delta: float | None
    outcome: str | None


@dataclass(frozen=True, slots=True)
class EvalRecord:
    """One query in one arm (see the module docstring); ``@timestamp`` is the run's end."""

    timestamp: str = field(metadata={"json": "@timestamp"})
    run_id: str
    dataset: str
    arm: str
    fusion: str | None
    model: str | None
    query: QueryText
    metrics: RecordMetrics
    first_relevant_rank: int | None
    relevant: RelevantCounts
    retrieved_count: int
    missed: tuple[MissedDoc, ...]
    top_hits: tuple[TopHit, ...]
    attribution: tuple[Attribution, ...]
    arms_ndcg_at_10: dict[str, float]
    delta: Delta
    comparison: ArmComparison
    #: the round trip of the msearch batch that carried the query (not its own latency: see the load phase)
    batch_ms: float | None = field(metadata={"json": "batch_ms", "legacy": ("latency_ms",)})

    @property
    def id(self) -> str:
        """The record's document id (see :func:`record_id`)."""
        return record_id(self.run_id, self.dataset, self.arm, self.query.id)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = encode(self)
        return data

    @classmethod
    def from_json(cls, data: Any, where: str = "record") -> EvalRecord:
        record: EvalRecord = decode(cls, data, where)
        return record


def _jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except ValueError:
                raise RunError(
                    f"{path}:{lineno}: expected one JSON object per line, found {line[:80]!r}"
                ) from None


def load_per_query(run_dir: Path) -> list[QueryScores]:
    """``per_query.jsonl`` of a run directory; ``[]`` when the file is absent."""
    path = Path(run_dir) / PER_QUERY_FILE
    if not path.is_file():
        return []
    return [decode(QueryScores, row, f"{path}:{lineno}") for lineno, row in _jsonl(path)]


def load_pair_scores(run_dir: Path) -> list[PairScores]:
    """``overlap.jsonl`` of a run directory; ``[]`` when the file is absent (runs made before it)."""
    path = Path(run_dir) / OVERLAP_FILE
    if not path.is_file():
        return []
    return [decode(PairScores, row, f"{path}:{lineno}") for lineno, row in _jsonl(path)]


def load_records(run_dir: Path, *, required: bool = True) -> list[EvalRecord]:
    """The evaluation records of a run (``records.jsonl``); ``[]`` when absent and not ``required``."""
    path = Path(run_dir) / RECORDS_FILE
    if not path.is_file():
        if required:
            raise RunError(
                f"{run_dir} holds no {RECORDS_FILE}: expected the evaluation records the runner writes "
                "(run with the jsonl sink, or `harness run` writes it by default)"
            )
        return []
    return [EvalRecord.from_json(row, f"{path}:{lineno}") for lineno, row in _jsonl(path)]
