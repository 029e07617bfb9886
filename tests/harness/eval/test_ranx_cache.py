"""numba's typed containers, which ranx's runs and qrels are built of, come from numba's disk cache in every
process after the first (numba itself compiles them anew in each: ~4 s of one core)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests._support import REPO

SCORE_AND_FUSE = """
import json
import numba.typed.typeddict as typeddict, numba.typed.typedlist as typedlist
from numba.core.registry import CPUDispatcher
from harness.eval import evaluate, fuse

qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
runs = {"a": {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d3": 1.5}}, "b": {"q1": {"d2": 1.0}, "q2": {"d4": 0.5}}}
evaluate(qrels, fuse(runs, "rrf:k=60"), ["ndcg@10", "recall@100"])
used = {}
for module in (typeddict, typedlist):
    for name, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and value.overloads:
            stats = value.stats
            used[f"{module.__name__}.{name}"] = [sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]
print(json.dumps(used))
"""


def _containers_compiled() -> dict[str, list[int]]:
    """{dispatcher: [cache hits, cache misses]} of the typed containers one process used to score and fuse."""
    done = subprocess.run(
        [sys.executable, "-c", SCORE_AND_FUSE], cwd=REPO, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_the_typed_containers_load_from_numbas_cache_after_the_first_process() -> None:
    _containers_compiled()  # the first process on a fresh machine writes the cache
    used = _containers_compiled()
    assert any(name.startswith("numba.typed.typeddict.") for name in used), used
    assert any(name.startswith("numba.typed.typedlist.") for name in used), used
    compiled = {name: counts for name, counts in used.items() if counts[1] or not counts[0]}
    assert compiled == {}, f"compiled again, not loaded from the cache: {compiled}"
