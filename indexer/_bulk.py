"""Streaming bulk loader: byte-sized chunks, parallel senders, retries, no silent loss.

The producer (the caller's thread: reading and embedding) adds actions; full
chunks go through a bounded queue to ``workers`` sender threads, so embedding
overlaps with sending and memory stays bounded (queue depth × chunk size).
Whole requests that fail with 429, 5xx or a connection error are retried with
exponential backoff (the shared :class:`~base.Retry`, which honours a server's
``Retry-After``); so are single items rejected with 429 or 5xx. Any other
per-document error is collected with its id and reason and reported — never
dropped. Every action carries an explicit ``_id``, so a retry is idempotent.
A single document larger than a whole bulk request is refused up front
(:class:`DataError`): it is almost always a broken record.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from base import BulkIndexError, DataError, IndexingError, RequestFailed, Retry
from indexer.backends import Backend

RETRYABLE_STATUS = RequestFailed.RETRYABLE_STATUS
_STOP = object()


@dataclass(slots=True)
class BulkStats:
    actions: int = 0
    succeeded: int = 0
    requests: int = 0
    bytes_sent: int = 0
    retries: int = 0
    rejected_429: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Item:
    doc_id: str
    lines: tuple[bytes, ...]

    @property
    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines)


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class BulkLoader:
    """Use as a context manager; ``index``/``update`` add actions, leaving the block flushes and joins."""

    def __init__(
        self,
        backend: Backend,
        index: str,
        *,
        workers: int = 2,
        max_chunk_bytes: int = 4 * 1024 * 1024,
        max_chunk_docs: int = 1000,
        max_retries: int = 10,
        initial_backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        request_timeout_s: float = 120.0,
        on_success: Callable[[int], None] | None = None,
    ) -> None:
        if workers < 1:
            raise IndexingError(f"expected at least 1 bulk worker, found {workers}")
        if max_chunk_bytes < 1024:
            raise IndexingError(
                f"expected a bulk chunk size of at least 1 KiB, found {max_chunk_bytes} bytes"
            )
        # backend.bulk never retries on its own: our retry loop counts and paces retries
        self._backend = backend
        self.request_timeout_s = request_timeout_s
        self.index = index
        self.workers = workers
        self.max_chunk_bytes = max_chunk_bytes
        self.max_chunk_docs = max_chunk_docs
        self.retry = Retry(max_retries, initial_backoff_s, max_backoff_s)
        self.on_success = on_success
        self.stats = BulkStats()
        self._lock = threading.Lock()
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=workers * 2)
        self._chunk: list[_Item] = []
        self._chunk_bytes = 0
        self._errors: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._work, name=f"bulk-{i}", daemon=True) for i in range(workers)
        ]

    # -- producer side
    def __enter__(self) -> BulkLoader:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self._flush()
        else:  # an error or Ctrl-C in the producer: chunks not yet sent are dropped, not sent
            self._discard_queued()
        for _ in self._threads:
            self._queue.put(_STOP)
        for t in self._threads:
            t.join()
        if exc_type is None and self._errors:
            raise IndexingError(f"bulk loading into {self.index} failed") from self._errors[0]

    def _discard_queued(self) -> None:
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return

    def index_doc(self, doc_id: str, source: dict[str, Any]) -> None:
        self._add(_Item(doc_id, (dumps({"index": {"_index": self.index, "_id": doc_id}}), dumps(source))))

    def update_doc(self, doc_id: str, partial: dict[str, Any]) -> None:
        self._add(
            _Item(doc_id, (dumps({"update": {"_index": self.index, "_id": doc_id}}), dumps({"doc": partial})))
        )

    def _add(self, item: _Item) -> None:
        if self._errors:
            raise IndexingError(f"bulk loading into {self.index} failed") from self._errors[0]
        if item.size > self.max_chunk_bytes:
            # sent alone it would still be one oversized request; such a record is almost always broken data
            raise DataError(
                f"document {item.doc_id!r} is {item.size / 2**20:.1f} MiB as a bulk action: expected at most "
                f"{self.max_chunk_bytes / 2**20:.1f} MiB (one bulk request, --chunk-mb). A document this large "
                "is usually broken data (records run together, a whole file in one field): fix the corpus, "
                "or raise --chunk-mb if it is meant to be"
            )
        if self._chunk and (
            self._chunk_bytes + item.size > self.max_chunk_bytes or len(self._chunk) >= self.max_chunk_docs
        ):
            self._flush()
        self._chunk.append(item)
        self._chunk_bytes += item.size
        with self._lock:
            self.stats.actions += 1

    def _flush(self) -> None:
        if self._chunk:
            self._queue.put(self._chunk)  # blocks when senders are behind: backpressure, bounded memory
            self._chunk, self._chunk_bytes = [], 0

    # -- sender side
    def _work(self) -> None:
        while True:
            chunk = self._queue.get()
            if chunk is _STOP:
                return
            try:
                self._send(chunk)
            except BaseException as exc:  # surfaced to the producer, never swallowed
                self._errors.append(exc)

    def _send(self, chunk: list[_Item]) -> None:
        """One chunk: whole-request failures and single 429/5xx items retried (Retry); other failures kept."""

        def give_up(exc: BaseException, retries: int) -> BaseException:
            if isinstance(exc, RequestFailed):
                return IndexingError(
                    f"bulk request to {self.index} failed with HTTP {exc.status} after {retries} retries: {exc}"
                )
            return IndexingError(
                f"bulk request to {self.index} could not be delivered after {retries} retries: {exc}"
            )

        def on_retry(_: int, items: int, failure: BaseException | None) -> None:
            rejected = failure is None or (isinstance(failure, RequestFailed) and failure.status == 429)
            self._count_retry(items, rejected)

        self.retry.deliver(chunk, self._send_once, give_up=give_up, on_retry=on_retry)

    def _send_once(self, pending: list[_Item], may_retry: bool) -> list[_Item]:
        payload = b"".join(line + b"\n" for item in pending for line in item.lines)
        result = self._backend.bulk(payload, timeout_s=self.request_timeout_s)
        with self._lock:
            self.stats.requests += 1
            self.stats.bytes_sent += len(payload)
        if len(result.items) != len(pending):
            raise IndexingError(
                f"bulk request to {self.index} answered {len(result.items)} items for {len(pending)} actions"
            )
        retry: list[_Item] = []
        done = 0
        for item, answer in zip(pending, result.items, strict=True):
            if answer.ok:
                done += 1
            elif answer.status in RETRYABLE_STATUS and may_retry:
                retry.append(item)
            else:
                self._record_failure(item, answer.op, answer.status, answer.error_type, answer.reason)
        with self._lock:
            self.stats.succeeded += done
        if self.on_success and done:
            self.on_success(done)
        return retry

    def _record_failure(
        self, item: _Item, op: str, status: int, error_type: str | None, reason: str | None
    ) -> None:
        with self._lock:
            self.stats.failures.append(
                {"id": item.doc_id, "op": op, "status": status, "type": error_type, "reason": reason}
            )

    def _count_retry(self, items: int, rejected: bool) -> None:
        with self._lock:
            self.stats.retries += 1
            if rejected:
                self.stats.rejected_429 += items

    def raise_for_failures(self) -> None:
        if self.stats.failures:
            first = self.stats.failures[0]
            raise BulkIndexError(
                f"{len(self.stats.failures)} of {self.stats.actions} documents were rejected by {self.index}; "
                f"first: id {first['id']!r}: HTTP {first['status']} {first['type']}: {first['reason']}",
                self.stats.failures,
            )
