"""How many intra-op threads the embedding model runs on, beside a local engine.

Embedding and the engine's indexing share the machine's cores while a corpus is
loaded (the bulk senders run while the next window is embedded). On one or two
cores the model takes them all: the engine needs a core only in bursts (a bulk
request every window), the model's idle threads sleep rather than spin (ONNX
Runtime's spinning is turned off; OpenVINO's and torch's pools yield), and one
thread would halve the embedding rate for all of the load to gain a little in
the bursts (``bench/embedding.py --only build`` measures both on this machine).
On more cores one is left to the engine.
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
    return cores if cores <= 2 else cores - 1
