"""``Retry``: backoff, Retry-After honoured, give-up rules; ``retry_after_seconds`` header parsing."""

from __future__ import annotations

import email.utils

import pytest

from indexer import ConfigError, Retry, Retryable, retry_after_seconds


class Flaky:
    def __init__(self, failures: int, exc: Exception) -> None:
        self.failures, self.exc, self.calls = failures, exc, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc
        return "ok"


def _always(after_s: float | None = None) -> object:
    return lambda exc: Retryable(after_s=after_s)


def test_retries_until_success_with_growing_backoff() -> None:
    slept: list[float] = []
    retry = Retry(max_retries=5, initial_backoff_s=0.1, max_backoff_s=10, jitter=False, sleep=slept.append)
    fn = Flaky(3, RuntimeError("boom"))
    seen: list[int] = []
    assert retry.call(fn, classify=lambda e: Retryable(), on_retry=lambda n, w, e: seen.append(n)) == "ok"
    assert fn.calls == 4 and seen == [1, 2, 3]
    assert slept == pytest.approx([0.1, 0.2, 0.4])


def test_retry_after_is_honoured_and_capped() -> None:
    slept: list[float] = []
    retry = Retry(max_retries=3, initial_backoff_s=0.1, jitter=False, max_retry_after_s=5, sleep=slept.append)
    assert retry.call(Flaky(1, RuntimeError()), classify=lambda e: Retryable(after_s=2.5)) == "ok"
    assert retry.call(Flaky(1, RuntimeError()), classify=lambda e: Retryable(after_s=999)) == "ok"
    assert retry.call(Flaky(1, RuntimeError()), classify=lambda e: Retryable(after_s=0)) == "ok"
    assert slept == [2.5, 5.0, 0.1], "what the server asked, capped; no positive wait asked: backoff"


def test_not_retryable_raises_at_once_and_exhaustion_raises_the_last_error() -> None:
    slept: list[float] = []
    retry = Retry(max_retries=2, jitter=False, sleep=slept.append)
    fn = Flaky(5, ValueError("bad request"))
    with pytest.raises(ValueError, match="bad request"):
        retry.call(fn, classify=lambda e: None)
    assert fn.calls == 1 and slept == []
    fn = Flaky(5, RuntimeError("still down"))
    with pytest.raises(RuntimeError, match="still down"):
        retry.call(fn, classify=lambda e: Retryable())
    assert fn.calls == 3, "one try and two retries"


def test_jitter_stays_within_half_to_full_backoff() -> None:
    retry = Retry(initial_backoff_s=1.0, max_backoff_s=8.0)
    for attempt in range(1, 8):
        full = min(8.0, 2 ** (attempt - 1))
        assert 0.5 * full <= retry.delay(attempt) <= full


def test_bad_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        Retry(max_retries=-1)


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25, "ms wins"
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_seconds({"Retry-After": date}, now=now) == pytest.approx(30, abs=1)
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None
