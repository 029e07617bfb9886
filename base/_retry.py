"""One retry policy for every call to a cluster or an endpoint: exponential backoff with jitter.

Bulk loading, batched searches, record sinks and endpoint clients all deliver a list of
items through a request that can fail as a whole (connection lost, 429, 5xx) or item by
item (one search or one document rejected with 429). :meth:`Retry.deliver` runs that
loop once for all of them: whole-request failures that the caller calls transient are
retried, items that ``send`` hands back are sent again, and each retry waits
``initial_backoff_s * 2**(n-1)`` seconds (capped, halved at random for jitter, and never
less than a server's ``Retry-After`` hint). When attempts run out, the caller's
``give_up`` builds the error that is raised, so messages stay specific to each caller.

What is transient is decided once, here (:func:`transient`): a backend raises
:class:`~base.EngineUnavailable` (connection lost, refused, timed out) or
:class:`~base.RequestFailed` with ``retryable`` (429, 5xx) and, where the server sent
one, its ``Retry-After`` (:func:`retry_hint`); no caller looks at a client's exceptions.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from base._exceptions import ConfigError, EngineUnavailable, RequestFailed

T = TypeVar("T")
R = TypeVar("R")

#: ``send(items, may_retry)`` sends items and returns those to send again; with ``may_retry`` False it
#: must return none (it records or raises their failure instead)
Send = Callable[[list[T], bool], list[T]]
#: called before each wait: (retry number, items to resend, the whole-request failure or None)
OnRetry = Callable[[int, int, BaseException | None], None]


def transient(exc: BaseException) -> bool:
    """Whether the same request may succeed later: a lost connection, 429 or 5xx."""
    if isinstance(exc, EngineUnavailable):
        return True
    return isinstance(exc, RequestFailed) and exc.retryable


def retry_hint(exc: BaseException) -> float | None:
    """The seconds a server asked us to wait (``Retry-After``), or None."""
    return exc.retry_after if isinstance(exc, RequestFailed) else None


@dataclass(frozen=True, slots=True)
class Retry:
    """How often and how patiently to retry; immutable, shared by threads."""

    max_retries: int = 5
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 30.0

    def __post_init__(self) -> None:
        if not 0 <= self.max_retries <= 100:
            raise ConfigError(f"expected between 0 and 100 retries, found {self.max_retries}")
        if self.initial_backoff_s < 0 or self.max_backoff_s < self.initial_backoff_s:
            raise ConfigError(
                f"expected 0 <= initial backoff <= max backoff, found {self.initial_backoff_s} and "
                f"{self.max_backoff_s}"
            )

    def delay(self, retry: int, hint: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based); a server's hint is a floor."""
        base = min(self.max_backoff_s, self.initial_backoff_s * 2 ** (retry - 1))
        wait = base * (0.5 + random.random() / 2)
        return max(wait, min(hint, self.max_backoff_s)) if hint else wait

    def deliver(
        self,
        items: Sequence[T],
        send: Send[T],
        *,
        give_up: Callable[[BaseException, int], BaseException],
        transient: Callable[[BaseException], bool] = transient,
        on_retry: OnRetry | None = None,
        retry_after: Callable[[BaseException], float | None] = retry_hint,
    ) -> int:
        """Send ``items`` until none is left; returns how many retries it took.

        A failure of the whole request is retried when ``transient(exc)`` holds and attempts
        remain; otherwise ``give_up(exc, retries)`` is raised (its cause chain left out, so
        the message is the caller's own).
        """
        pending = list(items)
        retries = 0
        while pending:
            may_retry = retries < self.max_retries
            failure: BaseException | None = None
            try:
                pending = send(pending, may_retry)
            except Exception as exc:
                if not (may_retry and transient(exc)):
                    raise give_up(exc, retries) from None
                failure = exc
            if not pending:
                break
            retries += 1
            if on_retry is not None:
                on_retry(retries, len(pending), failure)
            time.sleep(self.delay(retries, retry_after(failure) if failure is not None else None))
        return retries

    def call(
        self,
        func: Callable[[], R],
        *,
        give_up: Callable[[BaseException, int], BaseException],
        transient: Callable[[BaseException], bool] = transient,
        on_retry: OnRetry | None = None,
        retry_after: Callable[[BaseException], float | None] = retry_hint,
    ) -> R:
        """Call ``func`` until it returns, retrying transient failures like :meth:`deliver`."""
        out: list[R] = []

        def send(_: list[None], __: bool) -> list[None]:
            out.append(func())
            return []

        self.deliver(
            [None], send, transient=transient, give_up=give_up, on_retry=on_retry, retry_after=retry_after
        )
        return out[0]
