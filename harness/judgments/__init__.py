"""Unjudged documents made visible and fixable: pools to judge, and runs re-scored with the judgments.

* :func:`pool_dataset` / :func:`write_pool` (``harness pool``): the unjudged (query, document)
  pairs in the top of a run's arms, written through :data:`POOL_WRITERS` (a judging sheet,
  Quepid's import CSV, TREC pool lines).
* :func:`rescore` (``harness rescore``): the run scored again from its TREC files with the
  judgments of a file (read by ``indexer.read_judgments``: TREC, TSV/CSV, Quepid, RRE),
  written to a new run directory.
"""

from harness.judgments._pool import (
    POOL_WRITERS,
    DatasetPool,
    PoolEntry,
    pool_dataset,
    pool_folder,
    pool_rankings,
    write_pool,
)
from harness.judgments._rescore import MODES, RescoreRequest, default_out, rescore
from harness.judgments._rundata import RunData, qrels_path
from harness.judgments._tables import pool_table, rescore_table

__all__ = [
    "MODES",
    "POOL_WRITERS",
    "DatasetPool",
    "PoolEntry",
    "RescoreRequest",
    "RunData",
    "default_out",
    "pool_dataset",
    "pool_folder",
    "pool_rankings",
    "pool_table",
    "qrels_path",
    "rescore",
    "rescore_table",
    "write_pool",
]
