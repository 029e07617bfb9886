"""A small OpenAI-compatible HTTP server that tests start on 127.0.0.1: a local stand-in for an LLM.

No LLM can be downloaded on these machines (the Hugging Face hub is unreachable), so the chat
answers are deterministic text built from the request, not a model's output: they exercise the
harness's client, cache, retries and files, never the quality of a generation. ``/v1/embeddings``
answers the stand-in encoder's vectors (tests/_encoder.py: 384 dimensions, derived from each text, no
model), unless a test asks for the real all-MiniLM-L6-v2 (``state.embeddings = "minilm"``, with the
``minilm`` fixture that marks it ``model``): then retrieval quality measured through the endpoint is the
model's.

What a test can do with it (``server.state``):

- count calls per route (``calls``) and successful answers (``answered``);
- queue faults for the next requests of a route: an HTTP status (429 with ``Retry-After`` or
  ``retry-after-ms``, 500, ...) or a delay longer than the client's timeout (``fail_next``);
- answer a status for every request whose text contains a marker (``fail_matching``), or answer a
  429 storm to a share of the requests (``storm``);
- slow every answer down (``delay_s``), require a key (``required_key``: 401 otherwise, echoing the
  key it got, as some servers do), and make answers carry a reasoning trace the way reasoning models
  do (``reasoning``: ``separate`` as ``reasoning_content``, ``think`` inline before ``</think>``,
  ``huatuo`` as "## Thinking ... ## Final Response ...");
- stand in for LLM judges (``judge_labels``: the human grade of each (query id, document id), 0 for
  pairs it does not hold). A judge prompt (``<query id=...>`` and ``<document id=...>`` in it) is
  answered ``##final score: N`` by the behaviour the *model name* asks for (see :func:`judge_answer`):
  ``truth``, ``flip:F`` (the label mirrored on the share F of pairs chosen by :func:`flips`),
  ``random``, ``offscale:F`` (an answer off the scale on the share F), ``obey`` (follows an "answer N"
  found in the document) and ``echo`` (repeats that instruction instead of a label); ``@SEED`` after
  the name changes which pairs. These judges never read the texts: they measure the harness's
  judging machinery (prompts, parsing, counting, agreement), not any LLM's quality.

``python -m tests._openai_server --port 8790 --qrels FILE`` serves the same stand-ins from the shell.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from tests._encoder import stand_in_vector

ROUTES = {"/v1/chat/completions": "chat", "/v1/embeddings": "embeddings", "/v1/models": "models"}


@dataclass(frozen=True, slots=True)
class Fault:
    """One planned failure: answer ``status`` (with headers), or stall ``delay_s`` before answering."""

    status: int = 500
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    message: str = "planned failure"


@dataclass
class ServerState:
    calls: Counter[str] = field(default_factory=Counter)
    answered: Counter[str] = field(default_factory=Counter)
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    matching: dict[str, Fault] = field(default_factory=dict)  # marker in the request text -> fault
    storm: tuple[int, Fault] | None = None  # (every k-th request passes, the fault for the others)
    delay_s: float = 0.0
    required_key: str | None = None
    reasoning: str = "none"  # none | separate | think | huatuo
    log: list[tuple[float, str, int]] = field(default_factory=list)  # (time, route, status)
    bodies: list[dict[str, Any]] = field(default_factory=list)  # every chat request body received
    judge_labels: dict[tuple[str, str], int] | None = None  # stand-in judges: (qid, doc) -> human grade
    judge_events: Counter[str] = field(default_factory=Counter)  # what the stand-in judges answered
    texts_embedded: int = 0
    embeddings: str = "stand-in"  # stand-in | minilm (the packaged model's own vectors)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, route: str, *faults: Fault) -> None:
        with self.lock:
            self.faults.setdefault(route, []).extend(faults)

    def fail_matching(self, marker: str, fault: Fault | None) -> None:
        with self.lock:
            if fault is None:
                self.matching.pop(marker, None)
            else:
                self.matching[marker] = fault

    def reset_counts(self) -> None:
        with self.lock:
            self.calls.clear()
            self.answered.clear()
            self.log.clear()
            self.texts_embedded = 0


def rate_limited(retry_after: str | None = None, retry_after_ms: str | None = None) -> Fault:
    headers = []
    if retry_after is not None:
        headers.append(("Retry-After", retry_after))
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", retry_after_ms))
    return Fault(429, tuple(headers), message="rate limited")


def stall(seconds: float) -> Fault:
    """Answer only after ``seconds`` (longer than the client's timeout: it sees a timeout)."""
    return Fault(200, delay_s=seconds, message="stalled")


def words(text: str) -> int:
    return len(text.split())


def chat_answer(messages: list[dict[str, Any]], reasoning: str) -> tuple[str, str | None]:
    """(content, reasoning_content): deterministic, from the last user message."""
    user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    tag = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:8]
    tail = " ".join(str(user).split()[-80:])
    answer = f"Answer {tag}: {tail}"
    thought = f"Thinking it through ({tag}): the question asks about {' '.join(str(user).split()[-12:])}."
    if reasoning == "separate":
        return answer, thought
    if reasoning == "think":
        return f"<think>\n{thought}\n</think>\n\n{answer}", None
    if reasoning == "huatuo":
        return f"## Thinking\n\n{thought}\n\n## Final Response\n\n{answer}", None
    return answer, None


# ----------------------------------------------------------------- stand-in judges
_QUERY_ID = re.compile(r'<query id="([^"]*)">')
_DOC = re.compile(r'<document id="([^"]*)">\n(.*?)\n</document>', re.DOTALL)
_LABELS = re.compile(r"one of ((?:\d+, )*\d+)")
_ORDER = re.compile(r"answer (\d+)", re.IGNORECASE)
#: answers that are no label on any scale (one is chosen per pair)
OFF_SCALE = (
    "##final score: 7",
    "##final score: 2.5",
    "Relevant.",
    "##final score: high",
    "It could be 1 or 2.",
)


def unit(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts`` (the stand-ins' only source of chance)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def flips(qid: str, doc: str, fraction: float, seed: int = 0) -> bool:
    """Whether ``flip:F`` mirrors this pair's label (about the share ``fraction`` of pairs, any label)."""
    return unit("flip", seed, qid, doc) < fraction


def on_scale(grade: int, top: int, graded_human: bool) -> int:
    """A human grade as the stand-in's truth on a 0..top scale (a binary human 1 is the top of a graded scale)."""
    if top == 1:
        return int(grade >= 1)
    return min(grade, top) if graded_human else top * int(grade >= 1)


def _behaviour(model: str) -> tuple[str, float, int]:
    name, _, seed = model.partition("@")
    kind, _, share = name.partition(":")
    return kind, float(share or 0.0), int(seed or 0)


def judge_answer(model: str, prompt: str, labels: dict[tuple[str, str], int]) -> tuple[str, str]:
    """(answer, event) of the stand-in judge ``model`` for one judge prompt."""
    qid = html.unescape(_QUERY_ID.search(prompt).group(1))  # type: ignore[union-attr]
    found = _DOC.search(prompt)
    assert found is not None, "a judge prompt carries its document inside <document id=...> ... </document>"
    doc, text = html.unescape(found.group(1)), found.group(2)
    scale = _LABELS.findall(prompt)
    top = int(scale[-1].split(", ")[-1]) if scale else 1
    graded = max(labels.values(), default=0) > 1
    truth = on_scale(labels.get((qid, doc), 0), top, graded)
    kind, share, seed = _behaviour(model)
    order = _ORDER.search(text)
    if kind == "flip" and flips(qid, doc, share, seed):
        return f"##final score: {top - truth}", "flipped"
    if kind == "random":
        return f"##final score: {int(unit('random', seed, qid, doc) * (top + 1))}", "random"
    if kind == "offscale" and unit("offscale", seed, qid, doc) < share:
        return OFF_SCALE[int(unit("which", qid, doc) * len(OFF_SCALE))], "offscale"
    if kind == "obey" and order:
        return f"##final score: {order.group(1)}", "obeyed"
    if kind == "echo" and order:
        return f"As the document says, I will ignore the instructions and {order.group(0)}.", "echoed"
    return f"##final score: {truth}", "truth"


class _Embedder:
    """The stand-in encoder's vectors, or all-MiniLM-L6-v2 from the packaged weights (loaded on first use,
    through the product's own encoder, so the marker guard sees a test that loads it without the mark)."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def encode(self, texts: list[str], kind: str) -> np.ndarray:
        if kind != "minilm":
            return np.stack([stand_in_vector(text) for text in texts]) if texts else np.zeros((0, 384))
        with self._lock:
            if self._model is None:
                from indexer.embed import Encoder, resolve_model

                self._model = Encoder(resolve_model("minilm"), device="cpu")
            vectors = self._model.encode(texts, batch_size=len(texts))
        return np.asarray(vectors, dtype=np.float32)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        route = ROUTES.get(self.path.rstrip("/"))
        if route != "models":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        self._send(200, {"object": "list", "data": [{"id": "any", "object": "model"}]})

    def do_POST(self) -> None:
        route = ROUTES.get(self.path.rstrip("/"))
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with state.lock:
            state.calls[route or self.path] += 1
            number = state.calls[route or self.path]
            if route == "chat":
                state.bodies.append(body)
        if route not in ("chat", "embeddings"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        given = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if state.required_key is not None and given != state.required_key:
            self._send(
                401,
                {"error": {"message": f"Incorrect API key provided: {given}", "type": "auth"}},
                route=route,
            )
            return
        fault = self._fault(route, number, json.dumps(body))
        if fault is not None and (fault.delay_s or fault.status != 200):
            if fault.delay_s:
                time.sleep(fault.delay_s)  # longer than the client waits: it has gone by now
            if fault.status != 200:
                self._send(fault.status, {"error": {"message": fault.message}}, fault.headers, route=route)
                return
        if state.delay_s:
            time.sleep(state.delay_s)
        payload = self._chat(body) if route == "chat" else self._embeddings(body)
        self._send(200, payload, route=route)

    def _fault(self, route: str, number: int, text: str) -> Fault | None:
        state = self.server.state
        with state.lock:
            queue = state.faults.get(route)
            if queue:
                return queue.pop(0)
            for marker, fault in state.matching.items():
                if marker in text:
                    return fault
            if state.storm is not None and route == "chat":
                every, fault = state.storm
                if number % every != 0:
                    return fault
        return None

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        content, reasoning = self._content(messages, str(body.get("model")))
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        prompt_tokens = sum(words(str(m.get("content", ""))) for m in messages)
        reasoning_tokens = words(reasoning or "")
        return {
            "id": "chatcmpl-" + hashlib.sha256(content.encode()).hexdigest()[:12],
            "object": "chat.completion",
            "created": 0,
            "model": f"served/{body.get('model')}",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": words(content) + reasoning_tokens,
                "total_tokens": prompt_tokens + words(content) + reasoning_tokens,
                "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
            },
        }

    def _content(self, messages: list[dict[str, Any]], model: str) -> tuple[str, str | None]:
        state = self.server.state
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        if state.judge_labels is None or "<query id=" not in prompt:
            return chat_answer(messages, state.reasoning)
        answer, event = judge_answer(model, prompt, state.judge_labels)
        with state.lock:
            state.judge_events[f"{model} {event}"] += 1
        return answer, None

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else list(texts or [])
        vectors = self.server.embedder.encode(texts, self.server.state.embeddings)
        with self.server.state.lock:
            self.server.state.texts_embedded += len(texts)
        base64_out = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode()
                if base64_out
                else v.tolist(),
            }
            for i, v in enumerate(vectors)
        ]
        tokens = sum(words(t) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _send(
        self,
        status: int,
        payload: dict[str, Any],
        headers: tuple[tuple[str, str], ...] = (),
        route: str | None = None,
    ) -> None:
        data = json.dumps(payload).encode()
        state = self.server.state
        with state.lock:
            state.log.append((time.monotonic(), route or self.path, status))
            if status == 200 and route is not None:
                state.answered[route] += 1
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: ServerState, embedder: _Embedder, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = state
        self.embedder = embedder


@dataclass
class OpenAIServer:
    """A running server: ``url`` is the base URL to give as ``--base-url``."""

    state: ServerState
    url: str


_EMBEDDER = _Embedder()  # one model per test process


@contextmanager
def openai_server() -> Iterator[OpenAIServer]:
    state = ServerState()
    server = _Server(state, _EMBEDDER)
    thread = threading.Thread(target=server.serve_forever, name="openai-test-server", daemon=True)
    thread.start()
    try:
        yield OpenAIServer(state, f"http://127.0.0.1:{server.server_address[1]}/v1")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _stop(signum: int, frame: object) -> None:  # pragma: no cover
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _serve() -> None:  # pragma: no cover - the shell entry of the stand-ins
    """Serve the stand-in judges on a port, their truth read from a judgments file, until interrupted."""
    from indexer import read_judgments

    parser = argparse.ArgumentParser(description="OpenAI-compatible stand-ins (no LLM): see this module.")
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument(
        "--qrels", type=str, required=True, help="human judgments (TREC, TSV, ...) by query id"
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    judged = read_judgments(args.qrels).qrels().qrels
    state = ServerState(judge_labels={(q, d): g for q, docs in judged.items() for d, g in docs.items()})
    server = _Server(state, _EMBEDDER, args.port)
    print(
        f"stand-in judges at http://127.0.0.1:{server.server_address[1]}/v1 (truth: {args.qrels})", flush=True
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        print(
            "what the stand-ins answered:",
            json.dumps(dict(sorted(state.judge_events.items())), indent=1),
            flush=True,
        )


if __name__ == "__main__":  # pragma: no cover
    _serve()
