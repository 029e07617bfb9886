"""LLMs behind OpenAI-compatible chat endpoints, for every command that asks one (``harness expand`` now;
judging next): the chat client and its answers, and the on-disk cache of generations.

    client = ChatClient(Endpoint.resolve("http://127.0.0.1:8000/v1"))
    answer = client.complete("gpt-4o-mini", [{"role": "user", "content": "..."}], temperature=0.7)
    with JsonCache("generations") as cache:            # ~/.cache/r2med-harness/generations/
        cache.put(digest("my-namespace-v1", model, prompt), answer.to_dict())
"""

from harness.llm._cache import JsonCache, digest
from harness.llm._chat import REASONING_FIELDS, ChatAnswer, ChatClient, chat_answer, create_chat
from harness.llm._keys import EndpointKeys, checked_endpoint

__all__ = [
    "REASONING_FIELDS",
    "ChatAnswer",
    "ChatClient",
    "EndpointKeys",
    "JsonCache",
    "chat_answer",
    "checked_endpoint",
    "create_chat",
    "digest",
]
