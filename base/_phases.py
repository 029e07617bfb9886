"""Where a command's time goes: named phases, reported by the work itself.

Work that a person (or ``bench/first_run.py``) would want timed runs inside :func:`phase`, or in a
function decorated with :func:`timed`::

    with phase("model load"):
        model = backend.load(...)

    @timed("score")
    def evaluate(...): ...

A thread's time goes to its innermost open phase: a phase inside another pauses the outer one (the
model loaded inside ``embed`` counts as ``model load`` only), and a phase inside one of the same name
counts once. Phases of the same name add up (``score`` runs once per arm); :func:`phase_totals` gives
this process's totals. With ``R2MED_TIMING_LOG=FILE`` set, each phase also appends one JSON line to
FILE when it ends, so a benchmark reads the phases from what the run reports, not from guesses::

    {"phase": "model load", "seconds": 1.234, "pid": 4242}
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

#: the environment variable naming the timing log (JSON lines; appended to, never truncated)
TIMING_LOG_ENV = "R2MED_TIMING_LOG"

P = ParamSpec("P")
R = TypeVar("R")

_totals: dict[str, float] = {}
_lock = threading.Lock()
_local = threading.local()


@dataclass(slots=True)
class _Open:
    name: str
    since: float  # start of the running segment (the phase is paused while an inner one runs)
    seconds: float = 0.0


def _stack() -> list[_Open]:
    stack: list[_Open] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _log(name: str, seconds: float) -> None:
    path = os.environ.get(TIMING_LOG_ENV)
    if not path:
        return
    line = json.dumps({"phase": name, "seconds": round(seconds, 4), "pid": os.getpid()})
    with _lock, open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def record_phase(name: str, seconds: float) -> None:
    """Add ``seconds`` to phase ``name`` (time measured elsewhere)."""
    with _lock:
        _totals[name] = _totals.get(name, 0.0) + seconds
    _log(name, seconds)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as phase ``name`` (see the module's notes on nesting)."""
    stack = _stack()
    if any(o.name == name for o in stack):
        yield
        return
    now = time.perf_counter()
    if stack:
        outer = stack[-1]
        outer.seconds += now - outer.since
    stack.append(_Open(name, now))
    try:
        yield
    finally:
        done = stack.pop()
        now = time.perf_counter()
        record_phase(name, done.seconds + now - done.since)
        if stack:
            stack[-1].since = now


def timed(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so that each call runs inside :func:`phase` ``name``."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with phase(name):
                return func(*args, **kwargs)

        return wrapper

    return decorate


def record_startup() -> None:
    """Phase ``start-up``: from this process's start to now (the interpreter and the imports of a command)."""
    import psutil

    record_phase("start-up", max(0.0, time.time() - psutil.Process().create_time()))


def phase_totals() -> dict[str, float]:
    """Seconds spent in each phase so far in this process."""
    with _lock:
        return dict(_totals)
