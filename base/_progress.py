"""The one progress factory: a live bar in a terminal, a line every few seconds in a log.

Long work (embedding, bulk loading, searching) reports through :func:`progress`::

    with progress("searching sample", total=900, unit="searches", console=console) as bar:
        bar.advance(100)

Work done in stages (a pipeline) names them, in order; :meth:`Tracker.advance` counts the last
stage, :meth:`Tracker.count` any stage, and :meth:`Tracker.busy` times the work of a stage::

    stages = (Stage("embed", "embedded", 5183), Stage("bulk", "indexed", 5183))
    with progress("indexing sample", unit="docs", stages=stages) as bar:
        with bar.busy("embed"):
            ...                      # embedding a window
        bar.count("embed", 128)
        bar.advance(1000)            # bulk-acknowledged

What is shown is the stage that bounds the work: the one its thread spends the most time in
(the others wait on it), with that stage's rate over the last :data:`RATE_WINDOW_S` seconds (so the
rate falls when work stalls, and rises as soon as it resumes) and the ETA at that rate, e.g.
``indexing sample: 1,568/5,183 docs embedded (30%), 11.2 docs/s, ETA 5:23, 868 indexed, 2:20 elapsed``.
Each stage's busy time is also a timing phase (:mod:`base._phases`).

In a terminal this is a rich progress bar. Outside one (a CI log, a pipe) a heartbeat thread prints
one plain line every ``every_s`` seconds and a last line when the work ends. :func:`quiet` (or
``enabled=False``) turns all of it off: ``--quiet`` prints only results.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.text import Text

from base._phases import phase

#: seconds between two heartbeat lines in a log
DEFAULT_EVERY_S = 10.0
#: the rate is measured over this many recent seconds (or since the start, when less)
RATE_WINDOW_S = 30.0
#: a rate (and the ETA from it) is shown once this many units are done: over fewer it says nothing
#: ("1 candidates checked, 0.0 candidates checked/s"); nor is a rate that would print as 0.0
MIN_RATE_UNITS = 10

_QUIET: ContextVar[bool] = ContextVar("r2med_progress_quiet", default=False)


@contextmanager
def quiet(on: bool = True) -> Iterator[None]:
    """No progress display inside the block (``--quiet``), whatever the callers ask for."""
    token = _QUIET.set(on)
    try:
        yield
    finally:
        _QUIET.reset(token)


def is_quiet() -> bool:
    """Whether progress displays are off here (inside :func:`quiet`)."""
    return _QUIET.get()


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of the work: its name (a timing phase), how its count reads, how many units it has."""

    name: str
    label: str = ""  # "embedded": "1,568/5,183 docs embedded"
    total: int | None = None


class Tracker(Protocol):
    """What long work sees of its progress display."""

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the last stage done."""

    def count(self, stage: str, n: int) -> None:
        """``n`` more units of ``stage`` done."""

    def busy(self, stage: str) -> AbstractContextManager[None]:
        """Time the block as work of ``stage`` (what tells which stage bounds the work)."""

    def set(self, **facts: str) -> None:
        """Extra facts shown after the count (e.g. ``retries="3"``)."""


class _Silent:
    def advance(self, n: int = 1) -> None:
        return None

    def count(self, stage: str, n: int) -> None:
        return None

    def busy(self, stage: str) -> AbstractContextManager[None]:
        return phase(stage)

    def set(self, **facts: str) -> None:
        return None


def hms(seconds: float) -> str:
    """``75`` -> ``1:15``; ``3700`` -> ``1:01:40``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass(slots=True)
class _Count:
    stage: Stage
    done: int = 0
    busy_s: float = 0.0  # finished busy blocks
    busy_since: list[float] = field(default_factory=list)  # starts of the blocks still running
    samples: deque[tuple[float, int]] = field(default_factory=deque)

    def add(self, n: int, now: float) -> None:
        self.done += n
        self.samples.append((now, self.done))
        while len(self.samples) > 2 and now - self.samples[1][0] >= RATE_WINDOW_S:
            self.samples.popleft()

    def busy(self, now: float) -> float:
        return self.busy_s + sum(now - t for t in self.busy_since)

    def rate(self, now: float, started: float) -> float:
        """Units per second over the last RATE_WINDOW_S seconds (since the start when less)."""
        since = max(started, now - RATE_WINDOW_S)
        before = 0
        for t, done in self.samples:
            if t > since:
                break
            before = done
        return (self.done - before) / (now - since) if now > since else 0.0

    def amount(self, unit: str) -> str:
        """``1,568/5,183 docs embedded (30%)``."""
        total = self.stage.total
        text = f"{self.done:,}/{total:,} {unit}" if total is not None else f"{self.done:,} {unit}"
        label = f" {self.stage.label}" if self.stage.label else ""
        share = f" ({100 * self.done / total:.0f}%)" if total else ""
        return f"{text}{label}{share}"

    def brief(self) -> str:
        """``868 indexed``."""
        return f"{self.done:,} {self.stage.label or self.stage.name}"


class _Work:
    """The counts, busy times and estimates behind either display (thread-safe)."""

    def __init__(
        self, what: str, unit: str, stages: Sequence[Stage], clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.what, self.unit, self.clock = what, unit, clock
        self.counts = {s.name: _Count(s) for s in stages}
        self.last = stages[-1].name
        self.facts: dict[str, str] = {}
        self.started = clock()
        self._lock = threading.Lock()

    def advance(self, n: int = 1) -> None:
        self.count(self.last, n)

    def count(self, stage: str, n: int) -> None:
        if n <= 0:
            return
        with self._lock:
            self.counts[stage].add(n, self.clock())
        self.changed()

    @contextmanager
    def busy(self, stage: str) -> Iterator[None]:
        count = self.counts[stage]
        started = self.clock()
        with self._lock:
            count.busy_since.append(started)
        try:
            with phase(stage):
                yield
        finally:
            with self._lock:
                count.busy_since.remove(started)
                count.busy_s += self.clock() - started

    def set(self, **facts: str) -> None:
        with self._lock:
            self.facts.update(facts)
        self.changed()

    def changed(self) -> None:
        """Called after every change (the terminal bar redraws from it)."""

    def bound(self, now: float) -> _Count:
        """The stage the work waits on: the busiest, else the first not finished, else the last."""
        counts = list(self.counts.values())
        if any(c.busy(now) > 0 for c in counts):
            return max(counts, key=lambda c: c.busy(now))
        unfinished = [c for c in counts if c.stage.total is None or c.done < c.stage.total]
        return unfinished[0] if unfinished else counts[-1]

    def status(self, *, final: bool = False) -> str:
        """``1,568/5,183 docs embedded (30%), 11.2 docs/s, ETA 5:23, 868 indexed, 2:20 elapsed``; the
        ``final`` line's rate is the average over the whole work."""
        now = self.clock()
        with self._lock:
            bound = self.bound(now)
            rate = bound.rate(now, self.started) if not final else bound.done / max(now - self.started, 1e-9)
            parts = [bound.amount(self.unit)]
            if bound.done >= MIN_RATE_UNITS and rate >= 0.05:
                parts.append(f"{rate:,.1f} {self.unit}/s")
                total = bound.stage.total
                if total is not None and bound.done < total:
                    parts.append(f"ETA {hms((total - bound.done) / rate)}")
            others = [c.brief() for c in self.counts.values() if c is not bound]
            facts = [f"{key.replace('_', ' ')} {value}" for key, value in self.facts.items()]
        return ", ".join([*parts, *others, *facts, f"{hms(now - self.started)} elapsed"])

    def line(self, *, final: bool = False) -> str:
        return f"{self.what}: {self.status(final=final)}"


class _Lines(_Work):
    """Plain heartbeat lines for logs: one every ``every_s`` seconds and one at the end."""

    def __init__(
        self, console: Console, what: str, unit: str, stages: Sequence[Stage], every_s: float
    ) -> None:
        super().__init__(what, unit, stages)
        self.console, self.every_s = console, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)

    def _print(self, *, final: bool = False) -> None:
        self.console.print(self.line(final=final), markup=False, highlight=False, soft_wrap=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
            self._print()

    def __enter__(self) -> _Lines:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._print(final=True)


class _Status(ProgressColumn):
    def __init__(self, work: _Work) -> None:
        super().__init__()
        self.work = work

    def render(self, task: Task) -> Text:
        return Text(self.work.status(), style="progress.data.speed")


class _Bar(_Work):
    """A rich bar for terminals: the bounding stage's share, then the same status as the log lines."""

    def __init__(self, console: Console, what: str, unit: str, stages: Sequence[Stage]) -> None:
        super().__init__(what, unit, stages)
        self.live = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), _Status(self), console=console
        )
        self.task = self.live.add_task(what, total=None)

    def changed(self) -> None:
        with self._lock:
            bound = self.bound(self.clock())
            done, total = bound.done, bound.stage.total
        self.live.update(self.task, completed=done, total=total)

    def __enter__(self) -> _Bar:
        self.changed()
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)


@contextmanager
def progress(
    what: str,
    total: int | None = None,
    *,
    unit: str = "items",
    console: Console | None = None,
    enabled: bool = True,
    every_s: float = DEFAULT_EVERY_S,
    stages: Sequence[Stage] = (),
) -> Iterator[Tracker]:
    """Show progress of ``what`` (``total`` units, or unknown; or the given ``stages``) while the block runs."""
    console = console or Console(stderr=True)
    stages = tuple(stages) or (Stage(what, "", total),)
    if not enabled or is_quiet():
        yield _Silent()
    elif console.is_terminal:
        with _Bar(console, what, unit, stages) as bar:
            yield bar
    else:
        with _Lines(console, what, unit, stages, every_s) as lines:
            yield lines
