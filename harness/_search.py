"""Batched msearch with bounded concurrency, timeouts and retries, on either engine.

Every request is a list of ``(arm, qid, body)``; hits become runs
``{qid: {docid: score}}``. A query whose search returns nothing gets an empty
ranking (scored 0 later), never dropped. Whole requests failing with 429/5xx
or connection errors are retried with backoff (the shared :class:`~base.Retry`
decides, from the backend's typed errors); single searches rejected with 429/5xx
are retried alone; anything else stops the run with a clear error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from base import ConfigError, EngineUnavailable, RequestFailed, Retry, timed
from harness._errors import RunError
from indexer import Backend, SearchResult

RETRYABLE = RequestFailed.RETRYABLE_STATUS
CLAUSE_HINT = (
    ". The query text has more distinct terms than the cluster allows clauses in one query: raise the "
    "cluster's indices.query.bool.max_clause_count (OpenSearch defaults to 1024; the managed node sets "
    "16384), or shorten the expansion"
)


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

    @property
    def retry(self) -> Retry:
        return Retry(max_retries=self.max_retries, initial_backoff_s=self.initial_backoff_s)


Request = tuple[str, str, dict[str, Any]]


@timed("search")
def run_searches(
    backend: Backend,
    index: str,
    requests: Sequence[Request],
    options: SearchOptions | None = None,
    on_done: Callable[[int], None] | None = None,
    *,
    id_field: str = "_id",
    stored_templates: bool = False,
) -> dict[str, ArmRun]:
    """Run every request; returns arm -> ArmRun (wall_s is the whole call's wall time).

    ``id_field``: the ``_source`` field that names documents in the rankings (``_id``: the engine's id);
    ``stored_templates``: the bodies name stored search templates (``{"id", "params"}``).
    Interrupted (Ctrl-C), batches not yet sent are cancelled at once; nothing is returned.
    """
    options = options or SearchOptions()
    results: dict[str, ArmRun] = {}
    for arm, _, _ in requests:
        results.setdefault(arm, ArmRun())
    batches = [
        list(requests[i : i + options.batch_size]) for i in range(0, len(requests), options.batch_size)
    ]
    started = time.perf_counter()
    pool = ThreadPoolExecutor(max_workers=options.concurrency)
    try:
        futures = [
            pool.submit(_send, backend, index, batch, options, (id_field, stored_templates))
            for batch in batches
        ]
        for batch, future in zip(batches, futures, strict=True):
            responses, client_ms, retries = future.result()
            for (arm, qid, _), answer in zip(batch, responses, strict=True):
                res = results[arm]
                try:
                    res.run[qid] = answer.ranking_by(id_field)
                except ConfigError as exc:
                    raise ConfigError(f"{arm} search for query {qid} on {index}: {exc}") from None
                res.took_ms[qid] = answer.took_ms
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


def _send(
    backend: Backend,
    index: str,
    batch: list[Request],
    options: SearchOptions,
    how: tuple[str, bool] = ("_id", False),
) -> tuple[list[SearchResult], float, int]:
    """One batch as msearch; whole-request failures and single 429/5xx searches retried (Retry)."""
    out: dict[int, SearchResult] = {}
    slowest = [0.0]
    id_field, stored = how

    def send(pending: list[int], may_retry: bool) -> list[int]:
        t0 = time.perf_counter()
        answers = backend.msearch(
            index,
            [batch[i][2] for i in pending],
            timeout_s=options.timeout_s,
            source_fields=() if id_field == "_id" else (id_field,),
            stored_templates=stored,
        )
        slowest[0] = max(slowest[0], (time.perf_counter() - t0) * 1000.0)
        again: list[int] = []
        for i, answer in zip(pending, answers, strict=True):
            if answer.error is None:
                out[i] = answer
            elif answer.status in RETRYABLE and may_retry:
                again.append(i)
            else:
                arm, qid, _ = batch[i]
                raise RunError(
                    f"{arm} search for query {qid} on {index} failed (HTTP {answer.status}): {answer.error}"
                    + (CLAUSE_HINT if "maxClauseCount" in answer.error else "")
                )
        return again

    def give_up(exc: BaseException, retries: int) -> BaseException:
        if isinstance(exc, EngineUnavailable):
            return RunError(
                f"the engine stopped answering searches on {index} after {retries} retries: {exc}"
            )
        if isinstance(exc, RequestFailed):
            return RunError(
                f"msearch on {index} failed with HTTP {exc.status} after {retries} retries: {exc}"
            )
        return exc

    retries = options.retry.deliver(list(range(len(batch))), send, give_up=give_up)
    return [out[i] for i in range(len(batch))], slowest[0], retries
