"""Shared plumbing of the benchmark scripts: the engine, repeats and medians, the summary table.

The scripts import this module as a sibling (``python bench/index.py`` puts
``bench/`` first on ``sys.path``). Nothing here asserts a timing: benchmarks
print figures and ratios measured in the same run.
"""

from __future__ import annotations

import os
import socket
import statistics
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from base import default_cache_dir, default_state_dir
from indexer import Backend, ConnectionSettings, EngineConfig, ManagedNode, connect
from indexer.node.flavours import get_engine

#: name of the managed node the benchmarks start when ES_URL is not set
NODE_NAME = "bench"
#: which engine the managed node runs (elasticsearch or opensearch)
ENGINE_VAR = "R2MED_BENCH_ENGINE"


@dataclass(frozen=True, slots=True)
class Engine:
    backend: Backend
    url: str
    description: str  # product, version, flavour and where it came from


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def engine(heap: str | None = None) -> Iterator[Engine]:
    """The cluster at ``ES_URL`` when set (either engine); otherwise a managed node named ``bench``
    (``$R2MED_BENCH_ENGINE``, default elasticsearch) on a free port, stopped on the way out (only if
    this call started it)."""
    if os.environ.get("ES_URL"):
        settings = ConnectionSettings.resolve()
        backend = connect(settings)
        caps = backend.probe()
        try:
            yield Engine(
                backend, settings.url, f"{caps.flavour} {caps.version} ({caps.build_flavour}) at ES_URL"
            )
        finally:
            backend.close()
        return
    flavour = get_engine(os.environ.get(ENGINE_VAR, "elasticsearch"))
    config = EngineConfig(
        state_dir=default_state_dir(),
        cache_dir=default_cache_dir(),
        name=f"{NODE_NAME}-{flavour.name}",
        http_port=free_port(),
        heap=heap or os.environ.get("R2MED_BENCH_HEAP", "1g"),
        engine=flavour.name,
    )
    node = ManagedNode(config)
    print(f"starting a managed {flavour.display} node {config.name!r} on {config.url} ...", file=sys.stderr)
    status, started = node.start()
    try:
        backend = connect(ConnectionSettings(url=status.url))
        caps = backend.probe()
        try:
            yield Engine(
                backend,
                status.url,
                f"{flavour.display} {caps.version} ({caps.build_flavour}), managed node {config.name!r} at {status.url}",
            )
        finally:
            backend.close()
    finally:
        if started:
            node.stop()


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def spread(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    """``median (min–max over n)`` for a line of per-repeat figures."""
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(median(values))} (min {fmt.format(min(values))}, max {fmt.format(max(values))}, n={len(values)})"


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the final summary: a figure, its baseline, their ratio and the target."""

    figure: str
    ours: str
    baseline: str
    ratio: float
    target: str
    met: bool | None  # None: no target to meet


def print_summary(title: str, rows: Sequence[Row]) -> None:
    headers = ("figure", "measured", "baseline", "ratio", "target", "")
    table = [
        (
            r.figure,
            r.ours,
            r.baseline,
            f"{r.ratio:.2f}x",
            r.target,
            "" if r.met is None else ("met" if r.met else "NOT met"),
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(line[i]) for line in table)) for i, h in enumerate(headers)]
    print()
    print(title)
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for line in table:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
