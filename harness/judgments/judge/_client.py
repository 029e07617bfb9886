"""The chat calls of one judge: the expansion command's client, cache and retries, reused as they are.

This is the one module of the judge that imports the OpenAI-compatible client and the JSON cache
(:mod:`harness.llm`). Each answer is committed to the judgments
cache the moment it arrives, keyed by the model, the sampling settings, the prompt's hash and the
rendered messages (so the query, the document and the judge's scale): no pair is judged twice by
the same judge, an interrupted run resumes with only the missing calls, and a second run makes none.
Retries honour ``Retry-After``; the key is read from the variable the user names and never stored
or printed. :meth:`JudgeCalls.plan` says what a run will cost before any call is made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from base import Endpoint, EndpointError, default_cache_dir
from harness._errors import GenerationError
from harness.expand import AUTO, GenerationSettings, GenerationStats, Generator, Task, choose_reasoning_format
from harness.judgments.judge._text import count_tokens
from harness.llm import ChatAnswer, JsonCache

CACHE_NAME = "judgments"
SHOWN_FAILURES = 10

#: sampling for judges: deterministic where the endpoint allows it (top_p left to the endpoint)
JUDGE_SETTINGS = GenerationSettings(temperature=0.0, top_p=None)
#: the endpoint's own defaults (timeout, concurrency, retries) where the user gives none
ENDPOINT_DEFAULTS = Endpoint()


def describe_endpoint(ep: Endpoint) -> dict[str, object]:
    """What may be stored about the endpoint: its URL, the key's variable name; never the key."""
    return dict(ep.describe())


@dataclass(frozen=True, slots=True)
class Plan:
    """What one judge's run will cost, known before any call."""

    pairs: int
    cached: int
    prompt_tokens: int
    """Prompt tokens of the calls to make (words and punctuation marks: an estimate)."""

    @property
    def calls(self) -> int:
        return self.pairs - self.cached


class JudgeCalls:
    """Answers of one judge (a model and a prompt) for many prompts, cached, concurrent, retried."""

    def __init__(
        self,
        ep: Endpoint,
        model: str,
        prompt_sha256: str,
        settings: GenerationSettings,
        cache_dir: Path | None,
    ) -> None:
        cache = JsonCache(CACHE_NAME, cache_dir or default_cache_dir() / CACHE_NAME)
        self.generator = Generator(ep, model, settings, prompt_sha256, cache)
        self.endpoint = ep
        self.model = model
        self._reasoning = choose_reasoning_format(AUTO, model)

    @property
    def stats(self) -> GenerationStats:
        return self.generator.stats

    def plan(self, tasks: Sequence[Task]) -> Plan:
        keys = {task.qid: self.generator.key(task) for task in tasks}
        cached = self.generator.cache.get_many(keys.values())
        tokens = sum(
            count_tokens(content)
            for task in tasks
            if keys[task.qid] not in cached
            for _, content in task.messages
        )
        return Plan(len(tasks), sum(1 for k in keys.values() if k in cached), tokens)

    def run(
        self,
        tasks: Sequence[Task],
        on_done: Callable[[int], None] | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> dict[str, ChatAnswer]:
        """An answer for every task, or an :class:`EndpointError` naming the pairs that got none
        (``on_retry``: see :meth:`Generator.run`)."""
        try:
            return self.generator.run(tasks, on_done, on_retry)
        except GenerationError as exc:
            shown = [f"{pair}: {why}" for pair, why in list(exc.failures.items())[:SHOWN_FAILURES]]
            more = len(exc.failures) - len(shown)
            raise EndpointError(
                f"{len(exc.failures)} of {len(tasks)} pairs got no answer from {self.model!r} at "
                f"{self.endpoint.url()}; no judgments were written. The answers received are cached: the same "
                "command again makes only the missing calls.\n  "
                + "\n  ".join(shown + ([f"... and {more} more"] if more > 0 else []))
            ) from None

    def final_text(self, answer: ChatAnswer) -> str:
        """The answer without a reasoning trace the model family writes before it (the text is read whole
        otherwise)."""
        return self._reasoning.split(answer.content)[1] if self._reasoning else answer.content
