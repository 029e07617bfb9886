"""OpenAI-compatible endpoints: Retry-After parsing, what is retried, the key's handling, URL checks."""

from __future__ import annotations

import email.utils

import httpx
import openai
import pytest

from base import ConfigError, Endpoint, Retry, explain, is_fatal, with_retries
from base._openai_api import EndpointFailure, is_transient, retry_after_seconds, retry_hint


def _status_error(
    status: int, headers: dict[str, str] | None = None, message: str = "nope"
) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    response = httpx.Response(
        status, headers=headers or {}, request=request, json={"error": {"message": message}}
    )
    return openai.APIStatusError(message, response=response, body={"message": message})


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    assert retry_after_seconds({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25, "ms wins"
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_seconds({"Retry-After": date}, now=now) == pytest.approx(30, abs=1)
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None


def test_what_is_retried_and_what_stops_everything() -> None:
    for status in (408, 409, 429, 500, 502, 503, 504):
        assert is_transient(_status_error(status)), status
    for status in (400, 401, 403, 404, 422):
        assert not is_transient(_status_error(status)), status
    assert is_fatal(_status_error(401)) and is_fatal(_status_error(404)) and not is_fatal(_status_error(400))
    request = httpx.Request("POST", "http://127.0.0.1:1/v1")
    assert is_transient(openai.APITimeoutError(request)) and is_transient(
        openai.APIConnectionError(request=request)
    )
    assert retry_hint(_status_error(429, {"Retry-After": "2"})) == 2.0


def test_with_retries_waits_at_least_retry_after_and_gives_up_with_the_cause() -> None:
    endpoint = Endpoint(base_url="http://127.0.0.1:1/v1", retry=Retry(max_retries=2, initial_backoff_s=0.0))
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise _status_error(503)
        return "ok"

    assert with_retries(endpoint, flaky) == "ok" and len(calls) == 3
    with pytest.raises(EndpointFailure) as info:
        with_retries(endpoint, lambda: (_ for _ in ()).throw(_status_error(400, message="too long")))
    assert info.value.retries == 0 and explain(info.value, endpoint, "m") == "HTTP 400: too long"


def test_the_key_comes_from_the_named_variable_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("R2MED_TEST_ENDPOINT_KEY", "sk-very-secret-value")
    endpoint = Endpoint.resolve("http://127.0.0.1:8000/v1/", "R2MED_TEST_ENDPOINT_KEY")
    key = endpoint.key()
    assert key is not None and key.reveal() == "sk-very-secret-value"
    assert "sk-very" not in repr(endpoint) + str(key) + repr(key) + str(endpoint.describe())
    assert (
        endpoint.describe()["api_key_env"] == "R2MED_TEST_ENDPOINT_KEY"
        and endpoint.url() == "http://127.0.0.1:8000/v1"
    )
    echoed = _status_error(401, message="Incorrect API key provided: sk-very-secret-value")
    text = explain(echoed, endpoint, "m")
    assert "sk-very-secret-value" not in text and "Incorrect API key provided: ***" in text
    assert "is R2MED_TEST_ENDPOINT_KEY the right key" in text


def test_endpoint_settings_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("R2MED_UNSET_KEY", raising=False)
    with pytest.raises(ConfigError, match="R2MED_UNSET_KEY, but that environment variable is not set"):
        Endpoint.resolve(None, "R2MED_UNSET_KEY")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert Endpoint.resolve(None, None).key() is None, "the default variable may be unset (a local server)"
    for url, message in [
        ("ftp://host/v1", "expected an endpoint URL"),
        ("http://u:p@host/v1", "credentials inside the endpoint URL are not accepted"),
    ]:
        with pytest.raises(ConfigError, match=message):
            Endpoint(base_url=url)
    with pytest.raises(ConfigError, match="expected an environment variable name"):
        Endpoint(api_key_env="NOT A NAME")
