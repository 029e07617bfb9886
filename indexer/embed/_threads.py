"""How many intra-op threads the embedding model runs on, beside a local engine.

While a corpus is loaded, embedding and the engine's indexing share the machine's
cores: the bulk senders run while the next window is embedded. The model leaves
one core to the engine and takes the rest (one thread on a 2-core machine). On
our 2-core machines the second thread bought nothing even without an engine
(in-process, alternating: ONNX Runtime fp32 1.09x, torch 0.95x, OpenVINO bf16
0.80x of one thread's speed), and beside the engine one thread built an index
faster than two (``bench/embedding.py --only build``; docs/embedding-numerics.md).
Thread counts do not change the vectors (checked for all three runtimes). ONNX
Runtime's idle threads sleep rather than spin, so the engine gets the cores
between batches.
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """CPUs this process may run on (its affinity, which containers and taskset narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def embed_threads(cores: int | None = None) -> int:
    """Intra-op threads for the embedding model on ``cores`` usable cores (None: this process's)."""
    cores = usable_cores() if cores is None else cores
    return max(1, cores - 1)
