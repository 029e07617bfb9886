"""The progress display tells the truth: the rate and ETA of the stage that bounds the work.

Defect (issue 21): embedding the sample read "868/5,183 docs (17%), 5.1 docs/s" for 70 s while 700 more
documents were embedded: the count was of bulk-acknowledged documents only, the rate a whole-run
average that fell while work went on, and there was no ETA.
"""

from __future__ import annotations

import io
import re
import time

from rich.console import Console

from base import progress, quiet
from base._progress import RATE_WINDOW_S, Stage, _Work

STAGES = (Stage("embed", "embedded", 1000), Stage("bulk", "indexed", 1000))


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def embed_for(work: _Work, clock: Clock, seconds: int, per_s: int) -> None:
    """The pipeline's thread embedding for ``seconds``, ``per_s`` documents a second."""
    with work.busy("embed"):
        for _ in range(seconds):
            clock.t += 1
            work.count("embed", per_s)


def test_a_cold_embed_shows_the_embedding_rate_and_eta_while_bulk_waits() -> None:
    clock = Clock()
    work = _Work("indexing sample", "docs", STAGES, clock=clock)
    embed_for(work, clock, 50, 10)
    work.advance(500)  # a window acknowledged at once, after 50 s of embedding
    embed_for(work, clock, 20, 10)
    assert work.status() == "700/1,000 docs embedded (70%), 10.0 docs/s, ETA 0:30, 500 indexed, 1:10 elapsed"


def test_the_rate_falls_when_work_stalls_and_comes_back_when_it_resumes() -> None:
    clock = Clock()
    work = _Work("indexing sample", "docs", STAGES, clock=clock)
    embed_for(work, clock, 40, 10)
    clock.t += RATE_WINDOW_S  # nothing done for a whole rate window: no rate, no ETA, no guess
    assert work.status() == "400/1,000 docs embedded (40%), 0 indexed, 1:10 elapsed"
    embed_for(work, clock, 15, 20)
    assert re.search(r"700/1,000 docs embedded \(70%\), 10\.0 docs/s, ETA 0:30", work.status())


def test_a_warm_cache_shows_the_bulk_rate_the_work_waits_on() -> None:
    clock = Clock()
    work = _Work("indexing sample", "docs", STAGES, clock=clock)
    for _ in range(4):
        with work.busy("embed"):  # cache hits: a window at once
            clock.t += 0.1
            work.count("embed", 250)
        with work.busy("bulk"):  # blocked on the full bulk queue
            clock.t += 2.4
        work.advance(125)
    assert (
        work.status() == "500/1,000 docs indexed (50%), 50.0 docs/s, ETA 0:10, 1,000 embedded, 0:10 elapsed"
    )
    assert work.status(final=True).startswith("500/1,000 docs indexed (50%), 50.0 docs/s, ETA")


def test_no_line_shows_a_rate_that_means_nothing() -> None:
    """Defect (issue 28): auto's check ended on "1 candidates checked, 0.0 candidates checked/s"."""
    clock = Clock()
    work = _Work("choosing the numerics", "checks", (Stage("check", "", 2),), clock=clock)
    clock.t += 26
    work.advance(1)
    assert work.status(final=True) == "1/2 checks (50%), 0:26 elapsed"  # one unit: no rate, no ETA
    slow = _Work("indexing x", "docs", (Stage("bulk", "indexed", 1000),), clock=clock)
    clock.t += 600
    slow.advance(20)  # 0.03 docs/s would print as 0.0
    assert slow.status(final=True) == "20/1,000 docs indexed (2%), 10:00 elapsed"
    clock.t += 10
    slow.advance(980)
    assert slow.status(final=True) == "1,000/1,000 docs indexed (100%), 1.6 docs/s, 10:10 elapsed"


def test_a_log_gets_a_line_every_few_seconds_and_a_last_line_with_the_mean_rate() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=80)
    with progress("indexing x", unit="docs", console=console, every_s=0.05, stages=STAGES[:1]) as bar:
        for _ in range(5):
            with bar.busy("embed"):
                time.sleep(0.06)
            bar.advance(200)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 4, lines  # heartbeats while it ran, then the last line
    assert all(line.startswith("indexing x: ") for line in lines)
    assert re.fullmatch(
        r"indexing x: 1,000/1,000 docs embedded \(100%\), [\d,.]+ docs/s, 0:00 elapsed", lines[-1]
    )
    assert "\x1b" not in out.getvalue()


def test_a_terminal_gets_the_same_status_beside_a_bar() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    with progress("searching x", 40, unit="searches", console=console) as bar:
        bar.advance(40)
    assert re.search(r"40/40 searches \(100%\), [\d,.]+ searches/s, 0:00 elapsed", out.getvalue())


def test_quiet_turns_off_every_display_inside_it() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False)
    with quiet(), progress("x", 3, console=console, every_s=0.01) as bar:
        bar.advance(3)
        time.sleep(0.03)
    with progress("y", 1, console=console, enabled=False) as bar:
        bar.advance()
    assert out.getvalue() == ""
    with progress("z", 1, console=console) as bar:  # outside quiet(): shown again
        bar.advance()
    assert out.getvalue().startswith("z: 1/1 items (100%)")
