"""Judgments, all in one package: where they come from, how they meet a dataset's, and what they show.

* :mod:`.sources`: the registry behind an experiment's ``[judgments]`` table (``judgments.source``: files,
  clicks, judge), each source reading its own keys once.
* :mod:`.clicks`: judgments from User Behavior Insights click logs through a click model (COEC, CTR), the
  query sets sampled from them and the simulated logs (``harness clicks``).
* :mod:`.judge`: LLM judges over pooled pairs, combined, with their agreement with people measured
  (``harness judge``).
* :func:`pool_dataset` / :func:`write_pool` (``harness pool``): the unjudged (query, document)
  pairs in the top of a run's arms, written through :data:`POOL_WRITERS` (a judging sheet,
  Quepid's import CSV, TREC pool lines).
* :func:`rescore` (``harness rescore``): the run scored again from its TREC files with the
  judgments of a file (read by ``indexer.read_judgments``: TREC, TSV/CSV, Quepid, RRE),
  written to a new run directory.
* :func:`merge_judgments` / :func:`judgments_used` (``MODES``: merge, fill, replace): how another source's
  judgments meet a dataset's, for ``rescore`` and for an experiment's ``[judgments]`` source alike.

The judgments file formats themselves (TREC qrels, TSV/CSV, Quepid, RRE) and the UBI log readers are dataset
input, read where datasets are loaded (``indexer.data``).
"""

from harness.judgments._apply import DEFAULT_MODE, MODES, Merged, judgments_used, merge_judgments
from harness.judgments._pool import (
    POOL_WRITERS,
    DatasetPool,
    PoolEntry,
    pool_dataset,
    pool_folder,
    pool_rankings,
    write_pool,
)
from harness.judgments._rescore import RescoreRequest, default_out, rescore
from harness.judgments._rundata import QRELS_FOLDER, RunData, qrels_path, qrels_text
from harness.judgments._tables import pool_table, rescore_table

__all__ = [
    "DEFAULT_MODE",
    "MODES",
    "POOL_WRITERS",
    "QRELS_FOLDER",
    "DatasetPool",
    "Merged",
    "PoolEntry",
    "RescoreRequest",
    "RunData",
    "default_out",
    "judgments_used",
    "merge_judgments",
    "pool_dataset",
    "pool_folder",
    "pool_rankings",
    "pool_table",
    "qrels_path",
    "qrels_text",
    "rescore",
    "rescore_table",
    "write_pool",
]
