"""Batched msearch with bounded concurrency, timeouts and retries.

Every request is a list of ``(arm, qid, body)``; hits become runs
``{qid: {docid: score}}``. A query whose search returns nothing gets an empty
ranking (scored 0 later), never dropped. Whole requests failing with 429/5xx
or connection errors are retried with backoff; single searches rejected with
429/5xx are retried alone; anything else stops the run with a clear error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout
from elasticsearch import ApiError, Elasticsearch

from harness._errors import RunError
from indexer import ConfigError, HarnessError, Retry

RETRYABLE = frozenset({429, 500, 502, 503, 504})
#: only what a ranking needs comes back: less JSON to send, parse and hold
MSEARCH_FILTER = [
    "responses.took",
    "responses.status",
    "responses.error",
    "responses.hits.hits._id",
    "responses.hits.hits._score",
]


@dataclass(slots=True)
class ArmRun:
    """The ranking of one arm and what it cost (checkpointed as JSON)."""

    run: dict[str, dict[str, float]] = field(default_factory=dict)
    took_ms: dict[str, float] = field(default_factory=dict)  # engine-reported, per query
    client_ms: dict[str, float] = field(default_factory=dict)  # round trip of the msearch that carried it
    wall_s: float = 0.0
    retries: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "took_ms": self.took_ms,
            "client_ms": self.client_ms,
            "wall_s": self.wall_s,
            "retries": self.retries,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmRun:
        return cls(
            run=data["run"],
            took_ms=data["took_ms"],
            client_ms=data["client_ms"],
            wall_s=float(data["wall_s"]),
            retries=int(data.get("retries", 0)),
        )


@dataclass(frozen=True, slots=True)
class SearchOptions:
    batch_size: int = 32
    concurrency: int = 2
    timeout_s: float = 60.0
    max_retries: int = 5
    initial_backoff_s: float = 0.5

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= 1000:
            raise ConfigError(f"expected an msearch batch size between 1 and 1000, found {self.batch_size}")
        if not 1 <= self.concurrency <= 32:
            raise ConfigError(f"expected a search concurrency between 1 and 32, found {self.concurrency}")
        if self.timeout_s <= 0:
            raise ConfigError(f"expected a positive --timeout, found {self.timeout_s}")

    @property
    def retry(self) -> Retry:
        return Retry(max_retries=self.max_retries, initial_backoff_s=self.initial_backoff_s)


Request = tuple[str, str, dict[str, Any]]


def run_searches(
    client: Elasticsearch,
    index: str,
    requests: Sequence[Request],
    options: SearchOptions | None = None,
    on_done: Callable[[int], None] | None = None,
) -> dict[str, ArmRun]:
    """Run every request; returns arm -> ArmRun (wall_s is the whole call's wall time).

    Interrupted (Ctrl-C), batches not yet sent are cancelled at once; nothing is returned.
    """
    options = options or SearchOptions()
    es = client.options(request_timeout=options.timeout_s, max_retries=0, retry_on_status=())
    results: dict[str, ArmRun] = {}
    for arm, _, _ in requests:
        results.setdefault(arm, ArmRun())
    batches = [
        list(requests[i : i + options.batch_size]) for i in range(0, len(requests), options.batch_size)
    ]
    started = time.perf_counter()
    pool = ThreadPoolExecutor(max_workers=options.concurrency)
    try:
        futures = [pool.submit(_send, es, index, batch, options) for batch in batches]
        for batch, future in zip(batches, futures, strict=True):
            responses, client_ms, retries = future.result()
            for (arm, qid, _), resp in zip(batch, responses, strict=True):
                res = results[arm]
                hits = resp.get("hits", {}).get("hits", [])  # filter_path drops empty hit lists
                res.run[qid] = {hit["_id"]: float(hit["_score"]) for hit in hits}
                res.took_ms[qid] = float(resp.get("took", 0))
                res.client_ms[qid] = client_ms
                res.retries += retries
            if on_done:
                on_done(len(batch))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # on an error or Ctrl-C: nothing more is sent
    wall = time.perf_counter() - started
    for res in results.values():
        res.wall_s = wall
    return results


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, ApiError):
        return exc.meta.status in RETRYABLE
    return isinstance(exc, TransportConnectionError | ConnectionTimeout)


def _send(
    es: Elasticsearch, index: str, batch: list[Request], options: SearchOptions
) -> tuple[list[dict[str, Any]], float, int]:
    """One batch as msearch; whole-request failures and single 429/5xx searches retried (Retry)."""
    out: dict[int, dict[str, Any]] = {}
    slowest = [0.0]

    def send(pending: list[int], may_retry: bool) -> list[int]:
        searches: list[dict[str, Any]] = []
        for i in pending:
            searches += [{"index": index}, batch[i][2]]
        t0 = time.perf_counter()
        resp = es.msearch(searches=searches, filter_path=MSEARCH_FILTER)
        slowest[0] = max(slowest[0], (time.perf_counter() - t0) * 1000.0)
        again: list[int] = []
        for i, item in zip(pending, resp["responses"], strict=True):
            if "error" not in item:
                out[i] = item
            elif int(item.get("status", 500)) in RETRYABLE and may_retry:
                again.append(i)
            else:
                arm, qid, _ = batch[i]
                raise RunError(
                    f"{arm} search for query {qid} on {index} failed (HTTP {item.get('status', 500)}): {item['error']}"
                )
        return again

    def give_up(exc: BaseException, retries: int) -> BaseException:
        if isinstance(exc, HarnessError):
            return exc
        if isinstance(exc, ApiError):
            return RunError(
                f"msearch on {index} failed with HTTP {exc.meta.status} after {retries} retries: {_reason(exc)}"
            )
        if isinstance(exc, TransportConnectionError | ConnectionTimeout):
            return RunError(
                f"the engine stopped answering searches on {index} after {retries} retries: {exc}"
            )
        return exc

    retries = options.retry.deliver(list(range(len(batch))), send, transient=_transient, give_up=give_up)
    return [out[i] for i in range(len(batch))], slowest[0], retries


def _reason(exc: ApiError) -> str:
    try:
        return str(exc.body["error"]["root_cause"][0]["reason"])
    except (KeyError, IndexError, TypeError):
        return str(exc)
