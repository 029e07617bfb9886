"""Batched msearch with bounded concurrency, timeouts and retries.

Every request is a list of ``(arm, qid, body)``; hits become runs
``{qid: {docid: score}}``. A query whose search returns nothing gets an empty
ranking (scored 0 later), never dropped. Whole requests failing with 429/5xx
or connection errors are retried with backoff; single searches rejected with
429/5xx are retried alone; anything else stops the run with a clear error.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout
from elasticsearch import ApiError, Elasticsearch

from indexer import RunError

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
class ArmResult:
    """The ranking of one arm and what it cost."""

    run: dict[str, dict[str, float]] = field(default_factory=dict)
    took_ms: dict[str, float] = field(default_factory=dict)  # engine-reported, per query
    client_ms: dict[str, float] = field(
        default_factory=dict
    )  # client-observed, per query (its msearch round trip)
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
    def from_dict(cls, data: dict[str, Any]) -> ArmResult:
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
            raise RunError(f"expected an msearch batch size between 1 and 1000, found {self.batch_size}")
        if not 1 <= self.concurrency <= 32:
            raise RunError(f"expected a search concurrency between 1 and 32, found {self.concurrency}")


Request = tuple[str, str, dict[str, Any]]


def run_searches(
    client: Elasticsearch,
    index: str,
    requests: Sequence[Request],
    options: SearchOptions | None = None,
    on_done: Callable[[int], None] | None = None,
) -> dict[str, ArmResult]:
    """Run every request; returns arm -> ArmResult (wall_s is the whole call's wall time)."""
    options = options or SearchOptions()
    es = client.options(request_timeout=options.timeout_s, max_retries=0, retry_on_status=())
    results: dict[str, ArmResult] = {}
    for arm, _, _ in requests:
        results.setdefault(arm, ArmResult())
    batches = [
        list(requests[i : i + options.batch_size]) for i in range(0, len(requests), options.batch_size)
    ]
    started = time.perf_counter()

    def one(batch: list[Request]) -> tuple[list[Request], list[dict[str, Any]], float, int]:
        return _send(es, index, batch, options)

    with ThreadPoolExecutor(max_workers=options.concurrency) as pool:
        for batch, responses, client_ms, retries in pool.map(one, batches):
            for (arm, qid, _), resp in zip(batch, responses, strict=True):
                res = results[arm]
                hits = resp.get("hits", {}).get("hits", [])  # filter_path drops empty hit lists
                res.run[qid] = {hit["_id"]: float(hit["_score"]) for hit in hits}
                res.took_ms[qid] = float(resp.get("took", 0))
                res.client_ms[qid] = client_ms
                res.retries += retries
            if on_done:
                on_done(len(batch))
    wall = time.perf_counter() - started
    for res in results.values():
        res.wall_s = wall
    return results


def _send(
    es: Elasticsearch, index: str, batch: list[Request], options: SearchOptions
) -> tuple[list[Request], list[dict[str, Any]], float, int]:
    out: list[dict[str, Any] | None] = [None] * len(batch)
    pending = list(range(len(batch)))
    attempt = 0
    retries = 0
    client_ms = 0.0
    while pending:
        searches: list[dict[str, Any]] = []
        for i in pending:
            searches += [{"index": index}, batch[i][2]]
        t0 = time.perf_counter()
        try:
            resp = es.msearch(searches=searches, filter_path=MSEARCH_FILTER)
        except ApiError as exc:
            if exc.meta.status in RETRYABLE and attempt < options.max_retries:
                attempt, retries = attempt + 1, retries + 1
                _sleep(options, attempt)
                continue
            raise RunError(
                f"msearch on {index} failed with HTTP {exc.meta.status} after {retries} retries: {_reason(exc)}"
            ) from None
        except (TransportConnectionError, ConnectionTimeout) as exc:
            if attempt < options.max_retries:
                attempt, retries = attempt + 1, retries + 1
                _sleep(options, attempt)
                continue
            raise RunError(
                f"the engine stopped answering searches on {index} after {retries} retries: {exc}"
            ) from None
        client_ms = max(client_ms, (time.perf_counter() - t0) * 1000.0)
        again: list[int] = []
        for i, item in zip(pending, resp["responses"], strict=True):
            if "error" in item:
                status = int(item.get("status", 500))
                if status in RETRYABLE and attempt < options.max_retries:
                    again.append(i)
                    continue
                arm, qid, _ = batch[i]
                raise RunError(
                    f"{arm} search for query {qid} on {index} failed (HTTP {status}): {item['error']}"
                )
            out[i] = item
        pending = again
        if pending:
            attempt, retries = attempt + 1, retries + 1
            _sleep(options, attempt)
    return batch, [o for o in out if o is not None], client_ms, retries


def _sleep(options: SearchOptions, attempt: int) -> None:
    time.sleep(min(30.0, options.initial_backoff_s * 2 ** (attempt - 1)) * (0.5 + random.random() / 2))


def _reason(exc: ApiError) -> str:
    try:
        return str(exc.body["error"]["root_cause"][0]["reason"])
    except (KeyError, IndexError, TypeError):
        return str(exc)
