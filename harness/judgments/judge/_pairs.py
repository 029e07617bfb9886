"""The (query, document) pairs to judge: the pooled top-k of a run's arms, or the pairs of a file.

From a run (:func:`pairs_from_run`), the pool is ``harness pool``'s (the top ``depth`` of each chosen
arm, from the run's TREC files), with the pairs people already judged kept in by default: those
are where the judge's agreement with people is measured. From rankings held in memory (an
experiment's, :func:`pairs_from_rankings`), the same pool. From a file (:func:`pairs_from_file`): a
pool or qrels file in the layouts the harness writes and reads, recognised by its first line:

* TREC lines ``QUERY_ID 0 DOC_ID [GRADE]`` (``harness pool``'s ``pool.trec``, a qrels file), or
  ``QUERY_ID DOC_ID``;
* CSV or TSV with a header naming the query id and document id columns (``query_id``/``doc_id`` as
  in ``pool.csv``, or BEIR's ``query-id``/``corpus-id``).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from base import ConfigError, DataError
from harness.judgments._pool import pool_rankings
from harness.judgments._rundata import RunData
from harness.results import Ranking
from indexer import Dataset, load_dataset

DEFAULT_DEPTH = 10
QUERY_COLUMNS = ("query_id", "query-id", "qid")
DOC_COLUMNS = ("doc_id", "corpus-id", "docid", "doc-id")
SHOWN = 5


@dataclass(frozen=True, slots=True)
class Pair:
    qid: str
    doc_id: str

    @property
    def key(self) -> str:
        """The pair as messages name it (unique within a dataset)."""
        return f"query {self.qid} / doc {self.doc_id}"


@dataclass(frozen=True, slots=True)
class PairSet:
    """Pairs of one dataset to judge, where they came from, and (from rankings) the arms' rankings, whose
    order under human and judge labels is compared, and the index they searched."""

    dataset: Dataset
    pairs: tuple[Pair, ...]
    source: str
    rankings: dict[str, Ranking] = field(default_factory=dict)
    """arm -> query -> document ids, best first (empty for a pairs file)."""
    run_dir: Path | None = None
    depth: int = 0
    index: str = ""
    judge_in_judgments: str | None = None
    """The judge whose labels are among the run's judgments (a re-scored run): they are not people's."""

    @property
    def arms(self) -> tuple[str, ...]:
        return tuple(self.rankings)

    @property
    def queries(self) -> int:
        return len({p.qid for p in self.pairs})

    @property
    def judged(self) -> int:
        """Pairs people judged (any grade)."""
        return sum(1 for p in self.pairs if p.doc_id in self.dataset.qrels.get(p.qid, {}))


def _dataset_name(run: RunData, dataset: str | None) -> str:
    names = run.datasets([dataset] if dataset else [])
    if len(names) > 1:
        raise ConfigError(f"the run has several datasets ({', '.join(names)}): expected --dataset NAME")
    return names[0]


def pairs_from_rankings(
    ds: Dataset,
    rankings: Mapping[str, Ranking],
    *,
    depth: int = DEFAULT_DEPTH,
    unjudged_only: bool = False,
    where: str = "the rankings",
    index: str = "",
) -> PairSet:
    """The pooled top ``depth`` of ``rankings`` (arm -> query -> documents) over the judged queries of ``ds``."""
    entries, _ = pool_rankings(ds, rankings, depth, include_judged=not unjudged_only)
    which = "unjudged pairs" if unjudged_only else "pairs"
    source = f"{which} in the top {depth} of {', '.join(rankings)} in {where}"
    pairs = tuple(Pair(e.qid, e.doc_id) for e in entries)
    return PairSet(ds, pairs, source, dict(rankings), depth=depth, index=index)


def pairs_from_run(
    run_dir: Path,
    *,
    dataset: str | None = None,
    arms: Sequence[str] = (),
    depth: int = DEFAULT_DEPTH,
    unjudged_only: bool = False,
    data_path: Path | None = None,
) -> PairSet:
    """The pooled top ``depth`` of ``arms`` (default every arm) of a run, on one of its datasets."""
    run = RunData.load(run_dir)
    name = _dataset_name(run, dataset)
    ds = run.dataset(name, data_path)
    rankings = {arm: run.ranking(name, arm) for arm in run.arms(name, arms)}
    result = run.results.datasets[name]
    found = pairs_from_rankings(
        ds, rankings, depth=depth, unjudged_only=unjudged_only, where=str(run_dir), index=result.index
    )
    used = result.judgments.judge if result.judgments is not None else None
    return replace(found, run_dir=Path(run_dir), judge_in_judgments=used.id if used is not None else None)


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    try:
        text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
    except OSError as exc:
        raise ConfigError(f"cannot read the pairs file {path}: {exc.strerror or exc}") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise DataError(f"{path}: expected (query, document) pairs, found an empty file")
    head = lines[0][1]
    delimiter = "," if "," in head else "\t" if "\t" in head else None
    if delimiter is None:
        return [(n, line.split()) for n, line in lines]
    return [
        (n, row)
        for (n, _), row in zip(lines, csv.reader([t for _, t in lines], delimiter=delimiter), strict=False)
    ]


def _columns(path: Path, header: list[str]) -> tuple[int, int] | None:
    names = [h.strip().lower() for h in header]
    q = next((names.index(c) for c in QUERY_COLUMNS if c in names), None)
    d = next((names.index(c) for c in DOC_COLUMNS if c in names), None)
    if (q is None) != (d is None):
        raise DataError(
            f"{path}:1: expected a header with a query id column ({'/'.join(QUERY_COLUMNS)}) and a "
            f"document id column ({'/'.join(DOC_COLUMNS)}), found {header}"
        )
    return None if q is None or d is None else (q, d)


def _pair(row: list[str], cols: tuple[int, int] | None) -> tuple[str, str] | None:
    if cols is not None:
        return (row[cols[0]].strip(), row[cols[1]].strip()) if len(row) > max(cols) else None
    if len(row) == 2:
        return row[0], row[1]
    return (row[0], row[2]) if len(row) in (3, 4) else None


def read_pairs(path: Path, queries: set[str]) -> tuple[Pair, ...]:
    """The distinct pairs of a pairs file, in file order; every bad line is named at ``file:line``."""
    rows = _rows(path)
    cols = _columns(path, rows[0][1])
    problems: list[str] = []
    seen: dict[Pair, None] = {}
    for n, row in rows[1:] if cols is not None else rows:
        found = _pair(row, cols)
        if found is None or not all(found):
            problems.append(f"{path}:{n}: expected QUERY_ID 0 DOC_ID [GRADE] or QUERY_ID DOC_ID, found {row}")
        elif found[0] not in queries:
            problems.append(f"{path}:{n}: query {found[0]!r} is not a judged query of the dataset")
        else:
            seen.setdefault(Pair(*found))
    if problems:
        more = f"\n  ... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        raise DataError(
            f"{len(problems)} bad line(s) in the pairs file:\n  " + "\n  ".join(problems[:SHOWN]) + more
        )
    return tuple(seen)


def pairs_from_file(path: Path, dataset: str, *, index: str = "") -> PairSet:
    """The pairs of ``path`` for the queries of ``dataset`` (a name or a folder, as ``harness run`` takes)."""
    ds = load_dataset(dataset)
    pairs = read_pairs(Path(path), set(ds.queries))
    return PairSet(ds, pairs, f"pairs of {path}", index=index)
