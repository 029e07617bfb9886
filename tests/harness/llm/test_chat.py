"""``ChatClient`` against the OpenAI-compatible test server (a local stand-in: no LLM runs here)."""

from __future__ import annotations

import time

import pytest

from base import Endpoint, EndpointError, Retry, RetryCounter, explain, is_fatal
from harness.llm import ChatAnswer, ChatClient
from tests._openai_server import OpenAIServer, rate_limited

MESSAGES = [{"role": "user", "content": "What presents with Koplik spots?"}]


def _client(server: OpenAIServer, retries: int = 3) -> ChatClient:
    retry = Retry(max_retries=retries, initial_backoff_s=0.0, max_backoff_s=5.0)
    return ChatClient(Endpoint(base_url=server.url, retry=retry))


def test_an_answer_keeps_the_separate_reasoning_and_the_usage(server: OpenAIServer) -> None:
    server.state.reasoning = "separate"
    answer = _client(server).complete("tiny-r1", MESSAGES, temperature=0.0, seed=None)
    assert answer.content.strip() and answer.reasoning and answer.reasoning.strip()
    assert answer.prompt_tokens > 0 and answer.completion_tokens > 0
    assert ChatAnswer.from_dict(answer.to_dict()) == answer
    assert "seed" not in server.state.bodies[-1], "None params are left out of the request"
    assert server.state.bodies[-1]["temperature"] == 0.0


def test_a_rate_limit_is_retried_after_what_it_asks(server: OpenAIServer) -> None:
    server.state.fail_next("chat", rate_limited(retry_after="1"), rate_limited(retry_after_ms="200"))
    counter = RetryCounter()
    began = time.monotonic()
    answer = _client(server).complete("tiny", MESSAGES, counter)
    assert answer.content.strip()
    assert counter.count == 2 and server.state.calls["chat"] == 3
    assert time.monotonic() - began >= 1.2, "waited at least Retry-After (1 s) plus retry-after-ms (0.2 s)"


def test_a_refused_key_fails_at_once_and_the_key_never_shows(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.state.required_key = "the-right-key"
    monkeypatch.setenv("R2MED_TEST_CHAT_KEY", "sk-wrong-and-secret")
    endpoint = Endpoint(base_url=server.url, api_key_env="R2MED_TEST_CHAT_KEY", retry=Retry(max_retries=5))
    with pytest.raises(EndpointError) as info:
        ChatClient(endpoint).complete("tiny", MESSAGES)
    assert is_fatal(info.value) and server.state.calls["chat"] == 1, "a 401 is not retried"
    said = explain(info.value, endpoint, "tiny")
    assert "HTTP 401" in said and "R2MED_TEST_CHAT_KEY" in said
    assert "sk-wrong-and-secret" not in said + str(info.value)
