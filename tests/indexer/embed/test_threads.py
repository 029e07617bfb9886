"""The embedding model's intra-op threads beside a local engine."""

from __future__ import annotations

import os

from indexer.embed import embed_threads, usable_cores


def test_the_model_leaves_one_core_to_the_engine() -> None:
    assert [embed_threads(n) for n in (1, 2, 3, 4, 16)] == [1, 1, 2, 3, 15]


def test_the_default_counts_the_cores_this_process_may_use() -> None:
    assert usable_cores() == len(os.sched_getaffinity(0))
    assert embed_threads() == embed_threads(usable_cores())
