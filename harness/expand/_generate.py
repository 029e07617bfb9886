"""Chat generations for many queries: cached, concurrent, retried, counted.

Each query's answer is committed to the generation cache the moment it arrives, keyed by the
endpoint model, the generation settings, the prompt's hash and the rendered messages (the query, and
for LameR its passages). An interrupted run therefore resumes with only the missing calls, and a
second run makes none. At most ``endpoint.concurrency`` requests are in flight. A query whose
request still fails after the retries is named with its cause; a failure every request would share
(a bad key, an unknown model) stops the run at once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any

from base import Endpoint, EndpointError, RetryCounter, explain, is_fatal
from harness._errors import GenerationError
from harness.llm import ChatAnswer, ChatClient, JsonCache, digest

CACHE_NAMESPACE = "r2med-generation-v1"
SHOWN_FAILURES = 20


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    """Sampling settings sent with every request (``None`` ones are left to the endpoint)."""

    temperature: float | None = 0.7
    top_p: float | None = 1.0
    max_tokens: int | None = None
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Task:
    """One query to generate for: its id and the chat messages."""

    qid: str
    messages: tuple[tuple[str, str], ...]  # (role, content)

    def as_messages(self) -> list[dict[str, str]]:
        return [{"role": role, "content": content} for role, content in self.messages]


@dataclass(slots=True)
class GenerationStats:
    """What this run cost: calls made, answers reused, retries, tokens (of the calls made)."""

    queries: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add_call(self, answer: ChatAnswer) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += answer.prompt_tokens
            self.completion_tokens += answer.completion_tokens
            self.reasoning_tokens += answer.reasoning_tokens

    def add_retries(self, retries: int) -> None:
        with self._lock:
            self.retries += retries

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if not k.startswith("_")}


class Generator:
    """Generates one answer per task through ``endpoint``; answers are cached in ``cache``."""

    def __init__(
        self,
        endpoint: Endpoint,
        model: str,
        settings: GenerationSettings,
        prompt_sha256: str,
        cache: JsonCache,
        *,
        check: Callable[[ChatAnswer], str | None] | None = None,
    ) -> None:
        """``check`` says what is wrong with an answer (None: nothing); a wrong answer is not cached."""
        self.check = check
        self.endpoint = endpoint
        self.model = model
        self.settings = settings
        self.prompt_sha256 = prompt_sha256
        self.cache = cache
        self.stats = GenerationStats()
        self.chat = ChatClient(endpoint)

    def key(self, task: Task) -> str:
        settings = json.dumps(self.settings.to_dict(), sort_keys=True)
        messages = json.dumps(task.messages, ensure_ascii=False)
        return digest(CACHE_NAMESPACE, self.model, settings, self.prompt_sha256, messages)

    def _generate(self, task: Task, retries: RetryCounter) -> ChatAnswer:
        """One call (with retries, counted in ``retries``); the answer is committed to the cache before it
        is returned."""
        answer = self.chat.complete(self.model, task.as_messages(), retries, **self.settings.to_dict())
        self.stats.add_call(answer)
        problem = "no text" if not answer.content.strip() else (self.check(answer) if self.check else None)
        if problem:
            more = "; raise --max-tokens?" if answer.finish_reason == "length" else ""
            raise EndpointError(
                f"the model returned {problem} (finish_reason={answer.finish_reason!r}{more})"
            )
        self.cache.put(self.key(task), answer.to_dict())
        return answer

    def run(
        self,
        tasks: Sequence[Task],
        on_done: Callable[[int], None] | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> dict[str, ChatAnswer]:
        """An answer for every task, or :class:`GenerationError` naming each query that got none.
        ``on_retry`` is told, after each retry, how many there were and why (``3 (HTTP 429 x2, timeout)``)."""
        started = time.perf_counter()
        self.stats.queries = len(tasks)
        keys = {task.qid: self.key(task) for task in tasks}
        cached = self.cache.get_many(keys.values())
        answers = {qid: ChatAnswer.from_dict(cached[k]) for qid, k in keys.items() if k in cached}
        self.stats.cache_hits = len(answers)
        if on_done is not None and answers:
            on_done(len(answers))
        todo = [task for task in tasks if task.qid not in answers]
        failures: dict[str, str] = {}
        retries = RetryCounter(on_change=(lambda c: on_retry(c.describe())) if on_retry is not None else None)
        try:
            if todo:
                self._run_calls(todo, answers, failures, on_done, retries)
        finally:
            self.stats.add_retries(retries.count)
        self.stats.failed = len(failures)
        self.stats.seconds = time.perf_counter() - started
        if failures:
            raise GenerationError(self._failure_message(len(tasks), failures), failures)
        return {task.qid: answers[task.qid] for task in tasks}

    def _run_calls(
        self,
        todo: Sequence[Task],
        answers: dict[str, ChatAnswer],
        failures: dict[str, str],
        on_done: Callable[[int], None] | None,
        retries: RetryCounter,
    ) -> None:
        pool = ThreadPoolExecutor(max_workers=self.endpoint.concurrency, thread_name_prefix="generate")
        futures: dict[Future[ChatAnswer], Task] = {
            pool.submit(self._generate, task, retries): task for task in todo
        }
        try:
            for future in as_completed(futures):
                task = futures[future]
                try:
                    answers[task.qid] = future.result()
                except Exception as exc:
                    if is_fatal(exc):  # every other request would fail alike: stop now, in one sentence
                        raise EndpointError(
                            f"no answer from model {self.model!r}: {explain(exc, self.endpoint, self.model)}; "
                            f"nothing was written ({len(answers)} answers are cached)"
                        ) from None
                    failures[task.qid] = explain(exc, self.endpoint, self.model)
                if on_done is not None:
                    on_done(1)
        finally:
            # on success every future is done; on failure or Ctrl-C queued queries are dropped, and the
            # requests in flight finish (their answers are cached) as the process ends
            pool.shutdown(wait=False, cancel_futures=True)

    def _failure_message(self, total: int, failures: dict[str, str]) -> str:
        shown = list(failures.items())[:SHOWN_FAILURES]
        lines = [f"query {qid}: {why}" for qid, why in shown]
        if len(failures) > len(shown):
            lines.append(f"... and {len(failures) - len(shown)} more")
        return (
            f"{len(failures)} of {total} queries got no generation from {self.endpoint.url()} "
            f"(model {self.model!r}); nothing was written. The {total - len(failures)} answers received are "
            "cached: running the same command again makes only the missing calls.\n  " + "\n  ".join(lines)
        )
