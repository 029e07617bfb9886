"""A server's Retry-After reaches the shared Retry through both backends' one exception map.

Neither engine sends Retry-After itself; proxies and gateways in front of a cluster do (a 429 or 503
with ``Retry-After: N``). A small real HTTP server plays that gateway here; the clients, backends,
loader and Retry are the real ones.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from base import RequestFailed, Retry
from base._retry import retry_hint, transient
from indexer import ConnectionSettings
from indexer._bulk import BulkLoader
from indexer.backends import backend_class
from indexer.backends._errors import retry_after

BUSY = {"error": {"type": "es_rejected_execution_exception", "reason": "gateway says wait"}, "status": 429}


class _Gateway(BaseHTTPRequestHandler):
    """429 with Retry-After for the first ``busy`` bulk requests, then a successful bulk answer."""

    busy = 1
    hint = "1"
    seen: list[float]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        self.seen.append(time.monotonic())
        if len(self.seen) <= self.busy:
            self._answer(429, BUSY, {"Retry-After": self.hint})
            return
        ids = [json.loads(line)["index"]["_id"] for line in body.splitlines()[::2]]
        items = [{"index": {"_id": i, "status": 201}} for i in ids]
        self._answer(200, {"took": 1, "errors": False, "items": items}, {})

    def _answer(self, status: int, payload: object, headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("X-elastic-product", "Elasticsearch")  # elasticsearch-py checks it
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def _serve(busy: int, hint: str) -> Iterator[tuple[str, list[float]]]:
    seen: list[float] = []
    handler = type("Gateway", (_Gateway,), {"busy": busy, "hint": hint, "seen": seen})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def always_busy() -> Iterator[tuple[str, list[float]]]:
    yield from _serve(busy=100, hint="7")


@pytest.fixture()
def busy_once() -> Iterator[tuple[str, list[float]]]:
    yield from _serve(busy=1, hint="1")


@pytest.mark.parametrize("product", ["elasticsearch", "opensearch"])
def test_the_hint_is_carried_by_the_error(always_busy: tuple[str, list[float]], product: str) -> None:
    url, _ = always_busy
    backend = backend_class(product)(ConnectionSettings(url=url))  # type: ignore[call-arg]
    try:
        with pytest.raises(RequestFailed) as err:
            backend.bulk(b'{"index":{"_index":"x","_id":"1"}}\n{}\n')
    finally:
        backend.close()
    assert err.value.status == 429 and err.value.retryable and transient(err.value)
    assert err.value.retry_after == 7.0 and retry_hint(err.value) == 7.0
    assert "gateway says wait" in str(err.value)


@pytest.mark.parametrize("product", ["elasticsearch", "opensearch"])
def test_the_loader_waits_as_long_as_the_server_asks(
    busy_once: tuple[str, list[float]], product: str
) -> None:
    """The backoff alone would wait ~0.01 s; the gateway asked for 1 s, and the retry waited at least that."""
    url, seen = busy_once
    backend = backend_class(product)(ConnectionSettings(url=url))  # type: ignore[call-arg]
    try:
        with BulkLoader(backend, "x", workers=1, initial_backoff_s=0.01, max_backoff_s=5) as loader:
            loader.index_doc("1", {"t": "one"})
        loader.raise_for_failures()
    finally:
        backend.close()
    assert loader.stats.succeeded == 1 and loader.stats.retries == 1 and loader.stats.rejected_429 == 1
    assert len(seen) == 2 and seen[1] - seen[0] >= 1.0


def test_retry_after_forms() -> None:
    assert retry_after("12") == 12.0 and retry_after(None) is None and retry_after("soon") is None
    in_two_minutes = retry_after(formatdate(time.time() + 120, usegmt=True))
    assert in_two_minutes is not None and 100 < in_two_minutes <= 120
    assert Retry(initial_backoff_s=0.01, max_backoff_s=5).delay(1, 3.0) >= 3.0
