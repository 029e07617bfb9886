"""The one progress factory: a live bar in a terminal, a line every few seconds in a log.

Long work (embedding, bulk loading, searching) reports through :func:`progress`::

    with progress("indexing sample", total=5183, unit="docs", console=console) as bar:
        bar.advance(100)
        bar.set(embedded="1,024")

In a terminal this is a rich progress bar. Outside one (a CI log, a pipe) rich would
print nothing until the work ends, so a heartbeat thread prints one plain line every
``every_s`` seconds and a last line when the work ends, e.g.
``indexing sample: 2,048/5,183 docs (40%), 35.1 docs/s, 0:58 elapsed, embedded 3,072``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

#: seconds between two heartbeat lines in a log
DEFAULT_EVERY_S = 10.0


class Tracker(Protocol):
    """What long work sees of its progress display."""

    def advance(self, n: int = 1) -> None:
        """``n`` more units done."""

    def set(self, **facts: str) -> None:
        """Extra facts shown after the count (e.g. ``embedded="1,024"``)."""


class _Silent:
    def advance(self, n: int = 1) -> None:
        return None

    def set(self, **facts: str) -> None:
        return None


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class _Lines:
    """Plain heartbeat lines for logs: one every ``every_s`` seconds and one at the end."""

    def __init__(self, console: Console, what: str, total: int | None, unit: str, every_s: float) -> None:
        self.console, self.what, self.total, self.unit, self.every_s = console, what, total, unit, every_s
        self.done = 0
        self.facts: dict[str, str] = {}
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self.done += n

    def set(self, **facts: str) -> None:
        with self._lock:
            self.facts.update(facts)

    def line(self) -> str:
        with self._lock:
            done, facts = self.done, dict(self.facts)
        elapsed = time.perf_counter() - self.started
        count = f"{done:,}/{self.total:,} {self.unit}" if self.total is not None else f"{done:,} {self.unit}"
        if self.total:
            count += f" ({100 * done / self.total:.0f}%)"
        rate = f", {done / elapsed:,.1f} {self.unit}/s" if elapsed > 0 and done else ""
        extra = "".join(f", {key.replace('_', ' ')} {value}" for key, value in facts.items())
        return f"{self.what}: {count}{rate}, {_clock(elapsed)} elapsed{extra}"

    def _print(self) -> None:
        self.console.print(self.line(), markup=False, highlight=False, soft_wrap=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every_s):
            self._print()

    def __enter__(self) -> _Lines:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._print()


class _Rate(ProgressColumn):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None and task.elapsed:
            speed = task.completed / task.elapsed
        return Text(
            f"{speed:,.1f} {self.unit}/s" if speed else f"? {self.unit}/s", style="progress.data.speed"
        )


class _Bar:
    """A rich bar for terminals."""

    def __init__(self, live: Progress, what: str, total: int | None) -> None:
        self.live = live
        self.task = live.add_task(what, total=total, facts="")
        self.facts: dict[str, str] = {}

    def advance(self, n: int = 1) -> None:
        self.live.advance(self.task, n)

    def set(self, **facts: str) -> None:
        self.facts.update(facts)
        text = " ".join(f"{key.replace('_', ' ')} {value}" for key, value in self.facts.items())
        self.live.update(self.task, facts=text)


@contextmanager
def progress(
    what: str,
    total: int | None = None,
    *,
    unit: str = "items",
    console: Console | None = None,
    enabled: bool = True,
    every_s: float = DEFAULT_EVERY_S,
) -> Iterator[Tracker]:
    """Show progress of ``what`` (``total`` units, or unknown) while the block runs."""
    console = console or Console(stderr=True)
    if not enabled:
        yield _Silent()
    elif console.is_terminal:
        columns = (
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _Rate(unit),
            TimeElapsedColumn(),
            TextColumn("{task.fields[facts]}"),
        )
        with Progress(*columns, console=console) as live:
            yield _Bar(live, what, total)
    else:
        with _Lines(console, what, total, unit, every_s) as lines:
            yield lines
