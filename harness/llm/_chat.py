"""Chat completions through an OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp's server, hosted APIs).

The endpoint (:class:`indexer.Endpoint`) is shared with the embedding layer: where it is, the key
(read from the variable the user names, held in a ``Secret``, handed to the ``openai``
client and nowhere else, scrubbed from any error text), and one retry policy that waits at least what
``Retry-After`` asks. This module adds what only the harness needs: the chat call, its answer (the
reasoning trace apart, when the endpoint returns it so) and a :class:`ChatClient` that puts them together.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from base import Endpoint, RetryCounter, with_retries

#: fields in which OpenAI-compatible servers return a reasoning trace apart from the answer
REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning", "thinking")


@dataclass(frozen=True, slots=True)
class ChatAnswer:
    """One chat completion: the final text, the reasoning when the endpoint returns it apart, and usage."""

    content: str
    reasoning: str | None
    finish_reason: str | None
    model: str | None  # the model as the endpoint names it in its answer
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "reasoning": self.reasoning,
            "finish_reason": self.finish_reason,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatAnswer:
        return cls(
            content=str(data["content"]),
            reasoning=data.get("reasoning"),
            finish_reason=data.get("finish_reason"),
            model=data.get("model"),
            prompt_tokens=int(data.get("prompt_tokens") or 0),
            completion_tokens=int(data.get("completion_tokens") or 0),
            reasoning_tokens=int(data.get("reasoning_tokens") or 0),
        )


def _reasoning_of(message: Any) -> str | None:
    extra = getattr(message, "model_extra", None) or {}
    for name in REASONING_FIELDS:
        value = extra.get(name, getattr(message, name, None))
        if isinstance(value, str) and value.strip():
            return value
    return None


def chat_answer(response: Any) -> ChatAnswer:
    """A :class:`ChatAnswer` from an ``openai`` chat completion response."""
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    details = getattr(usage, "completion_tokens_details", None)
    return ChatAnswer(
        content=choice.message.content or "",
        reasoning=_reasoning_of(choice.message),
        finish_reason=choice.finish_reason,
        model=getattr(response, "model", None),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        reasoning_tokens=int(getattr(details, "reasoning_tokens", 0) or 0),
    )


def create_chat(client: Any, model: str, messages: Sequence[Mapping[str, str]], **params: Any) -> ChatAnswer:
    """One chat completion (no retries here; see :class:`ChatClient`). ``None`` params are left out."""
    sent = {k: v for k, v in params.items() if v is not None}
    return chat_answer(client.chat.completions.create(model=model, messages=list(messages), **sent))


class ChatClient:
    """Chat completions through one endpoint, under its retry policy; thread-safe (one ``openai`` client).

    A request that fails for good raises :class:`~base.EndpointError` (``is_fatal`` and ``explain``
    tell the caller whether every other request would fail alike, and what to say, without the key).
    """

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._client: Any = None
        self._lock = threading.Lock()

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self.endpoint.client()
            return self._client

    def complete(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        on_retry: RetryCounter | None = None,
        **params: Any,
    ) -> ChatAnswer:
        """One answer for ``messages``, retried as the endpoint's policy says (``on_retry`` counts retries)."""
        client = self._openai()
        return with_retries(self.endpoint, lambda: create_chat(client, model, messages, **params), on_retry)
