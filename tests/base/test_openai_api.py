"""OpenAI-compatible endpoints: what is retried and how long it waits (Retry-After), what fails at once and
in which words (nothing listening, an unknown host, a bad key, an unknown model), the key's handling, URL
checks. Through the public surface: ``with_retries`` with the waits recorded, and the stand-in server
(tests/_openai_server.py) or a port where nothing listens."""

from __future__ import annotations

import email.utils
import socket
import time
from collections.abc import Callable

import httpx
import openai
import pytest

from base import (
    ConfigError,
    Endpoint,
    EndpointFailure,
    Retry,
    RetryCounter,
    create_embeddings,
    explain,
    is_fatal,
    with_retries,
)
from tests._openai_server import Fault, OpenAIServer, rate_limited


def _status_error(
    status: int, headers: dict[str, str] | None = None, message: str = "nope"
) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    response = httpx.Response(
        status, headers=headers or {}, request=request, json={"error": {"message": message}}
    )
    return openai.APIStatusError(message, response=response, body={"message": message})


def _failing(*failures: BaseException) -> Callable[[], str]:
    """A call that raises ``failures`` in turn, then answers."""
    left = list(failures)

    def call() -> str:
        if left:
            raise left.pop(0)
        return "ok"

    return call


@pytest.fixture()
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between retries, recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    return slept


def _endpoint(url: str = "http://127.0.0.1:1/v1", retries: int = 3, **kwargs: object) -> Endpoint:
    return Endpoint(base_url=url, retry=Retry(max_retries=retries, initial_backoff_s=0.001), **kwargs)  # type: ignore[arg-type]


def _free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_wait_is_at_least_what_retry_after_asks_in_every_form(waits: list[float]) -> None:
    now = time.time()
    for headers, floor in [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),  # ms wins
        ({"Retry-After": email.utils.formatdate(now + 30, usegmt=True)}, 28.0),
    ]:
        waits.clear()
        assert with_retries(_endpoint(), _failing(_status_error(429, headers))) == "ok"
        assert len(waits) == 1 and floor <= waits[0] <= floor + 3, (headers, waits)
    waits.clear()
    with_retries(_endpoint(), _failing(_status_error(429, {"Retry-After": "soon"})))
    assert waits[0] < 1, "a hint that says nothing usable: the backoff's own wait"


def test_what_is_retried_and_what_stops_everything(waits: list[float]) -> None:
    request = httpx.Request("POST", "http://127.0.0.1:1/v1")
    for failure in [
        *(_status_error(status) for status in (408, 409, 429, 500, 502, 503, 504)),
        openai.APITimeoutError(request),
        openai.APIConnectionError(request=request),  # a lost connection, not a refused one
    ]:
        counter = RetryCounter()
        assert with_retries(_endpoint(), _failing(failure, failure), counter) == "ok", failure
        assert counter.count == 2
    for status, fatal in [(400, False), (401, True), (403, True), (404, True), (422, False)]:
        with pytest.raises(EndpointFailure) as info:
            with_retries(_endpoint(), _failing(_status_error(status)))
        assert info.value.retries == 0 and is_fatal(info.value) is fatal, status
    with pytest.raises(EndpointFailure) as gave_up:
        with_retries(_endpoint(retries=2), _failing(*[_status_error(503)] * 3))
    assert gave_up.value.retries == 2 and not is_fatal(gave_up.value)
    with pytest.raises(EndpointFailure) as info:
        with_retries(_endpoint(), _failing(_status_error(400, message="too long")))
    assert explain(info.value, _endpoint(), "m") == "HTTP 400: too long"


def test_retries_say_how_many_and_why() -> None:
    told: list[str] = []
    counter = RetryCounter(on_change=lambda c: told.append(c.describe()))
    request = httpx.Request("POST", "http://127.0.0.1:1/v1")
    failures = [_status_error(429), openai.APITimeoutError(request), _status_error(429), _status_error(503)]
    endpoint = Endpoint(base_url="http://127.0.0.1:1/v1", retry=Retry(max_retries=5, initial_backoff_s=0.0))
    assert with_retries(endpoint, _failing(*failures), counter) == "ok"
    assert told == [
        "1 (HTTP 429)",
        "2 (HTTP 429, timeout)",
        "3 (HTTP 429 x2, timeout)",
        "4 (HTTP 429 x2, timeout, HTTP 503)",
    ]


def test_nothing_listening_fails_at_the_first_call_naming_the_url_and_the_setting() -> None:
    """Issue 27: a judge with a mistyped port printed 0/300 pairs every 10 s until stopped; the policy (8
    retries, backoff up to 60 s) treated a refused connection like a 429."""
    url = f"http://127.0.0.1:{_free_port()}/v1"
    endpoint = Endpoint(base_url=url, key_flag="--llm-key-env", url_flag="--llm-url")  # the default policy
    counter = RetryCounter()
    began = time.monotonic()
    with pytest.raises(EndpointFailure) as info:
        with_retries(endpoint, lambda: endpoint.client().models.list(), counter)
    assert time.monotonic() - began < 10 and counter.count == 0 and is_fatal(info.value)
    assert explain(info.value, endpoint, "judge-x") == (
        f"expected an OpenAI-compatible endpoint at {url} (--llm-url), found nothing listening there "
        "(connection refused): start the server, or give the URL it listens on"
    )


def test_a_host_that_does_not_resolve_fails_at_once() -> None:
    endpoint = Endpoint(base_url="http://no-such-host.invalid:8000/v1")
    with pytest.raises(EndpointFailure) as info:
        with_retries(endpoint, lambda: create_embeddings(endpoint.client(), "m", ["x"]))
    assert is_fatal(info.value) and info.value.retries == 0
    assert explain(info.value, endpoint, "m") == (
        "expected an OpenAI-compatible endpoint at http://no-such-host.invalid:8000/v1 (--embed-url), found "
        "no host named 'no-such-host.invalid' (the name does not resolve)"
    )


def test_once_an_endpoint_answered_a_refused_connection_is_retried(server: OpenAIServer) -> None:
    """A server that answered may be restarting: then a refused connection can heal."""
    endpoint = _endpoint(server.url)
    assert with_retries(endpoint, lambda: create_embeddings(endpoint.client(), "m", ["x"]))[0]
    refused = openai.APIConnectionError(request=httpx.Request("POST", server.url))
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    counter = RetryCounter()
    assert (
        with_retries(endpoint, _failing(refused), counter) == "ok"
        and counter.describe() == "1 (connection lost)"
    )


def test_a_bad_key_and_an_unknown_model_name_the_url_and_the_setting(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("R2MED_TEST_ENDPOINT_KEY", "sk-wrong-and-secret")
    server.state.required_key = "sk-the-right-one"
    endpoint = _endpoint(server.url, api_key_env="R2MED_TEST_ENDPOINT_KEY", key_flag="--llm-key-env")
    with pytest.raises(EndpointFailure) as info:
        with_retries(endpoint, lambda: create_embeddings(endpoint.client(), "m", ["x"]))
    said = explain(info.value, endpoint, "m")
    assert said.startswith("HTTP 401: ") and is_fatal(info.value) and server.state.calls["embeddings"] == 1
    assert (
        f"is R2MED_TEST_ENDPOINT_KEY the right key for {server.url}? --llm-key-env names the variable" in said
    )
    assert "sk-wrong" not in said + str(info.value) and "sk-the-right" not in said
    server.state.required_key = None
    server.state.fail_next("embeddings", rate_limited())  # a retry first: a 404 after it is still fatal
    server.state.fail_next("embeddings", Fault(404, message="model 'nope' not found"))
    with pytest.raises(EndpointFailure) as missing:
        with_retries(endpoint, lambda: create_embeddings(endpoint.client(), "nope", ["x"]))
    said = explain(missing.value, endpoint, "nope")
    assert is_fatal(missing.value) and missing.value.retries == 1
    assert (
        f"(does {server.url} serve model 'nope' at this path? check the model's name and --embed-url)" in said
    )


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
