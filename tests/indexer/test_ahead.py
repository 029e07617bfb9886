"""indexer._ahead: the producer thread of the build path (embedding the next window while one is sent)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from indexer._ahead import ahead


def test_items_arrive_in_order_and_all_of_them() -> None:
    assert list(ahead(iter(range(50)))) == list(range(50))
    assert list(ahead(iter([]))) == []


def test_the_producer_runs_on_another_thread_at_most_depth_ahead() -> None:
    produced: list[int] = []
    threads: set[str] = set()

    def items() -> Iterator[int]:
        for i in range(6):
            threads.add(threading.current_thread().name)
            produced.append(i)
            yield i

    consumer = ahead(items(), depth=1, name="producer")
    assert next(consumer) == 0
    time.sleep(0.3)  # give the producer every chance to run further than it may
    # item 0 handed over, item 1 waiting in the hand-off, item 2 made and blocked on the full hand-off
    assert produced == [0, 1, 2]
    assert list(consumer) == [1, 2, 3, 4, 5]
    assert threads == {"producer"}


def test_a_producer_error_reaches_the_consumer_after_the_items_before_it() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("embedding failed at window 3")

    got = []
    with pytest.raises(ValueError, match="window 3"):
        for item in ahead(items()):
            got.append(item)
    assert got == [1, 2]


def test_a_consumer_that_stops_early_stops_the_producer() -> None:
    produced: list[int] = []

    def items() -> Iterator[int]:
        for i in range(1000):
            produced.append(i)
            yield i

    for item in ahead(items(), depth=2, name="stopped"):
        if item == 3:
            break
    time.sleep(0.5)
    assert len(produced) <= 3 + 1 + 2 + 1  # what was handed over, in the hand-off, and one in hand
    assert not any(t.name == "stopped" for t in threading.enumerate())


def test_depth_must_be_positive() -> None:
    with pytest.raises(ValueError, match="depth >= 1"):
        list(ahead(iter([1]), depth=0))
