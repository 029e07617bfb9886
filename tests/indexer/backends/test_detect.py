"""Which engine answers at a URL: both real engines, and real HTTP servers that are neither."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from base import ConnectionFailed, UnsupportedEngine
from indexer import ConnectionSettings, connect
from indexer.backends import backend_class, detect_product


def test_detects_both_engines(es_settings: ConnectionSettings, os_settings: ConnectionSettings) -> None:
    # the stripped Elasticsearch answers GET / with 405: its product header still says what it is
    assert detect_product(es_settings) == "elasticsearch"
    assert detect_product(os_settings) == "opensearch"


def _server(status: int, body: bytes, headers: dict[str, str]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def web_server() -> Iterator[str]:
    yield from _server(200, b"<html>hello</html>", {"content-type": "text/html"})


@pytest.fixture()
def locked_server() -> Iterator[str]:
    yield from _server(401, b"", {"www-authenticate": 'Basic realm="x"'})


def test_a_server_that_is_neither_engine(web_server: str) -> None:
    with pytest.raises(
        UnsupportedEngine, match=r"is neither Elasticsearch nor OpenSearch: GET / answered HTTP 200"
    ):
        connect(ConnectionSettings(url=web_server))


def test_credentials_refused_before_the_engine_is_known(locked_server: str) -> None:
    settings = ConnectionSettings.resolve(
        {"url": locked_server, "username": "u", "password": "s3cret-value"}, env={}
    )
    with pytest.raises(ConnectionFailed, match=r"rejected the credentials \(HTTP 401\)") as err:
        detect_product(settings)
    assert "s3cret-value" not in str(err.value)


def test_the_elasticsearch_client_refuses_opensearch(os_settings: ConnectionSettings) -> None:
    # why detection comes first: elasticsearch-py will not talk to OpenSearch at all
    backend = backend_class("elasticsearch")(os_settings)
    try:
        with pytest.raises(UnsupportedEngine, match=r"is not Elasticsearch"):
            backend.info()
    finally:
        backend.close()
