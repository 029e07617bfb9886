"""Work ahead on a thread of its own: the producer half of a producer/consumer pair.

``build_index`` embeds the next window while the previous one is serialised and
handed to the bulk senders::

    for window, vectors in ahead(embedded_windows(...)):
        send(window, vectors)

The producer runs at most ``depth`` items ahead (bounded memory); its exceptions
reach the consumer at the item where they happened; when the consumer stops
early (an error, Ctrl-C, a ``break``) the producer stops at its next item.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar, cast

T = TypeVar("T")
_END = object()
_POLL_S = 0.1


def ahead(items: Iterable[T], *, depth: int = 1, name: str = "ahead") -> Iterator[T]:
    """Yield ``items`` in order while a daemon thread produces up to ``depth`` more."""
    if depth < 1:
        raise ValueError(f"expected depth >= 1, found {depth}")
    handoff: queue.Queue[tuple[object, BaseException | None]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[object, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                handoff.put(entry, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as exc:  # handed to the consumer, which raises it
            put((_END, exc))
            return
        put((_END, None))

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while True:
            item, error = handoff.get()
            if error is not None:
                raise error
            if item is _END:
                break
            yield cast(T, item)
        thread.join()
    finally:
        stop.set()  # a consumer that stopped early: the producer ends after its current item
