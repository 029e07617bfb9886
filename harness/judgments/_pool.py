"""``harness pool``: the unjudged (query, document) pairs in the top of chosen arms, ready to judge.

For each dataset of a run, the top ``depth`` documents of each chosen arm (from the run's
TREC files) are pooled; the pairs that the run's judgments do not cover are written, with
the query text and the document's title and text (from the dataset), through
:data:`POOL_WRITERS`:

* ``pool.csv``: the judging sheet (dataset, query_id, query, doc_id, title, text, arms,
  best_rank, rating). Fill in ``rating`` and give the file to ``harness rescore --qrels``.
* ``quepid.csv``: ``query,docid,rating`` with blank ratings, the three columns Quepid's
  ratings import asks for; importing it creates the case's queries (Quepid matches
  queries by their text), and Quepid's own CSV export of the rated case reads back.
* ``pool.trec``: TREC pool lines ``QUERY_ID 0 DOC_ID`` (the qrels layout without its
  grade); append a grade to each line and it is a TREC qrels file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from base import ConfigError, slug, write_text_atomic
from harness.judgments._rundata import RunData
from harness.results import Ranking
from indexer import Dataset

POOL_CSV = "pool.csv"
SHEET_COLUMNS = ("dataset", "query_id", "query", "doc_id", "title", "text", "arms", "best_rank", "rating")


@dataclass(slots=True)
class PoolEntry:
    """One unjudged pair: which arms put the document in their top ``depth``, and its best rank."""

    qid: str
    doc_id: str
    best_rank: int
    arms: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ArmPool:
    """Counts for one arm: pairs in its top ``depth`` and how many of them are unjudged."""

    arm: str
    pairs: int
    unjudged: int


@dataclass(frozen=True, slots=True)
class DatasetPool:
    dataset: Dataset
    depth: int
    entries: tuple[PoolEntry, ...]
    per_arm: tuple[ArmPool, ...]
    documents: dict[str, tuple[str, str]]
    """doc id -> (title, text) for every pooled document the corpus holds."""

    @property
    def queries(self) -> int:
        return len({e.qid for e in self.entries})

    @property
    def comma_queries(self) -> int:
        """Pooled queries whose text has a comma: Quepid's import dialog (which splits lines on every
        comma to count columns) refuses their lines, though the CSV is valid; its API import takes them."""
        return len({e.qid for e in self.entries if "," in self.dataset.queries[e.qid]})

    @property
    def missing_documents(self) -> list[str]:
        return sorted({e.doc_id for e in self.entries} - set(self.documents))


def pool_rankings(
    ds: Dataset, rankings: Mapping[str, Ranking], depth: int, *, include_judged: bool = False
) -> tuple[tuple[PoolEntry, ...], tuple[ArmPool, ...]]:
    """The pairs in the top ``depth`` of each ranking (arm -> query -> documents) over the judged queries of
    ``ds`` (queries in id order, best rank first): the unjudged ones, or with ``include_judged`` all of them
    (a judge's agreement with people is measured on the judged ones)."""
    if depth < 1:
        raise ConfigError(f"expected a pool depth of at least 1, found {depth}")
    pooled: dict[tuple[str, str], PoolEntry] = {}
    per_arm = []
    for arm, ranking in rankings.items():
        pairs = unjudged = 0
        for qid in sorted(ds.qrels):
            for rank, doc in enumerate(ranking.get(qid, [])[:depth], 1):
                pairs += 1
                judged = doc in ds.qrels[qid]
                unjudged += not judged
                if judged and not include_judged:
                    continue
                entry = pooled.setdefault((qid, doc), PoolEntry(qid, doc, rank))
                entry.best_rank = min(entry.best_rank, rank)
                entry.arms.append(arm)
        per_arm.append(ArmPool(arm, pairs, unjudged))
    entries = tuple(sorted(pooled.values(), key=lambda e: (e.qid, e.best_rank, e.doc_id)))
    return entries, tuple(per_arm)


def pool_dataset(
    data: RunData,
    name: str,
    arms: Sequence[str],
    depth: int,
    data_path: Path | None,
    *,
    include_judged: bool = False,
) -> DatasetPool:
    """The unjudged pairs of ``arms`` at ``depth`` on dataset ``name`` of a run (see :func:`pool_rankings`)."""
    ds = data.dataset(name, data_path)
    rankings = {arm: data.ranking(name, arm) for arm in data.arms(name, arms)}
    entries, per_arm = pool_rankings(ds, rankings, depth, include_judged=include_judged)
    wanted = {e.doc_id for e in entries}
    documents = {d.id: (d.title, d.text) for d in ds.iter_corpus() if d.id in wanted}
    return DatasetPool(ds, depth, entries, per_arm, documents)


def _csv(rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def write_sheet(pool: DatasetPool, folder: Path) -> Path:
    ds = pool.dataset
    rows: list[Sequence[object]] = [SHEET_COLUMNS]
    for e in pool.entries:
        title, text = pool.documents.get(e.doc_id, ("", ""))
        rows.append(
            (ds.name, e.qid, ds.queries[e.qid], e.doc_id, title, text, " ".join(e.arms), e.best_rank, "")
        )
    path = folder / POOL_CSV
    write_text_atomic(path, _csv(rows))
    return path


def write_quepid(pool: DatasetPool, folder: Path) -> Path:
    rows: list[Sequence[object]] = [("query", "docid", "rating")]
    rows += [(pool.dataset.queries[e.qid], e.doc_id, "") for e in pool.entries]
    path = folder / "quepid.csv"
    write_text_atomic(path, _csv(rows))
    return path


def write_trec_pool(pool: DatasetPool, folder: Path) -> Path:
    path = folder / "pool.trec"
    write_text_atomic(path, "".join(f"{e.qid} 0 {e.doc_id}\n" for e in pool.entries))
    return path


#: the files a pool is written as, one writer each (the folder is the dataset's)
POOL_WRITERS: dict[str, Callable[[DatasetPool, Path], Path]] = {
    "csv": write_sheet,
    "quepid": write_quepid,
    "trec": write_trec_pool,
}


def has_ratings(sheet: Path) -> bool:
    """Whether a judging sheet already holds a rating someone typed in (then it must not be replaced)."""
    if not sheet.is_file():
        return False
    with sheet.open(encoding="utf-8", newline="") as fh:
        return any((row.get("rating") or "").strip() for row in csv.DictReader(fh))


def pool_folder(out: Path, dataset: str) -> Path:
    return Path(out) / slug(dataset)


def write_pool(pool: DatasetPool, out: Path, *, force: bool = False) -> list[Path]:
    """Every file of :data:`POOL_WRITERS` under ``out/<dataset>/``; never over a sheet with ratings."""
    folder = pool_folder(out, pool.dataset.name)
    if has_ratings(folder / POOL_CSV) and not force:
        raise ConfigError(
            f"{folder / POOL_CSV} already holds ratings: expected a pool folder without judgments in progress; "
            "choose another --output (or --force to replace it)"
        )
    return [writer(pool, folder) for writer in POOL_WRITERS.values()]
