"""What answers at a URL, asked first: both real engines, and real HTTP servers that answer as others do.

The servers here are plain HTTP servers on 127.0.0.1 that answer ``GET /`` as a cluster behind a login,
a proxy or a managed service would; each refusal must be one sentence (URL, expected, found, what to do).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from base import ConnectionFailed, UnsupportedEngine
from indexer import ConnectionSettings, connect
from indexer.backends import backend_class, check_floor, detect, detect_product

ES_HEADER = {"x-elastic-product": "Elasticsearch", "content-type": "application/json"}


def test_detects_both_engines(es_settings: ConnectionSettings, os_settings: ConnectionSettings) -> None:
    # the stripped Elasticsearch answers GET / with 405: its header says what it is, its node the version
    es = detect(es_settings)
    assert (es.product, es.major, es.serverless) == ("elasticsearch", 9, False)
    assert detect_product(os_settings) == "opensearch"
    assert detect(os_settings).version == "3.5.0"


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


@pytest.fixture()
def forbidding_server() -> Iterator[str]:
    """Elasticsearch answering a user without the monitor privilege (the product header, a 403)."""
    body = {
        "error": {"type": "security_exception", "reason": "action [cluster:monitor/main] is unauthorized"}
    }
    yield from _server(403, json.dumps(body).encode(), ES_HEADER)


@pytest.fixture()
def empty_path_server() -> Iterator[str]:
    """A proxy that serves nothing at / (as Amazon OpenSearch Serverless does)."""
    yield from _server(404, b'{"message":"Not Found"}', {"content-type": "application/json"})


def _root(version: str, flavor: str) -> bytes:
    return json.dumps(
        {"version": {"number": version, "build_flavor": flavor}, "tagline": "You Know"}
    ).encode()


@pytest.fixture()
def old_server() -> Iterator[str]:
    yield from _server(200, _root("7.10.2", "default"), ES_HEADER)


@pytest.fixture()
def serverless_server() -> Iterator[str]:
    yield from _server(200, _root("8.11.0", "serverless"), ES_HEADER)


def test_a_server_that_is_neither_engine(web_server: str) -> None:
    with pytest.raises(
        UnsupportedEngine, match=r"is neither Elasticsearch nor OpenSearch: GET / answered HTTP 200"
    ):
        connect(ConnectionSettings(url=web_server))


def test_credentials_refused_before_the_engine_is_known(locked_server: str) -> None:
    settings = ConnectionSettings.resolve(
        {"url": locked_server, "username": "u", "password": "s3cret-value"}, env={}
    )
    with pytest.raises(ConnectionFailed) as err:
        detect_product(settings)
    assert str(err.value) == (
        f"{locked_server} rejected the credentials (GET / answered HTTP 401: no body): expected a login it "
        "accepts, found auth basic refused; check the username/password or API key (connection.username, "
        "connection.password, connection.api_key)"
    )
    assert "s3cret-value" not in str(err.value)


def test_a_403_is_a_refusal_not_another_product(forbidding_server: str) -> None:
    with pytest.raises(ConnectionFailed) as err:
        connect(ConnectionSettings(url=forbidding_server))
    assert str(err.value) == (
        f"{forbidding_server} refused access (GET / answered HTTP 403: security_exception: action "
        "[cluster:monitor/main] is unauthorized): expected a user allowed to read the cluster's version (the "
        "`monitor` cluster privilege), found auth none refused; grant the privilege, or connect as another user"
    )
    assert "neither" not in str(err.value)


def test_a_404_says_where_to_look(empty_path_server: str) -> None:
    with pytest.raises(UnsupportedEngine) as err:
        connect(ConnectionSettings(url=empty_path_server))
    assert str(err.value).startswith(
        f"{empty_path_server} answered GET / with HTTP 404 (Not Found): expected the root endpoint of "
        "Elasticsearch or OpenSearch, found nothing there; check the URL"
    )
    assert "connection.service=aoss" in str(err.value)


def test_below_the_floor_before_any_other_call(old_server: str) -> None:
    """7.10 (Amazon's last Elasticsearch, among others): the harness's own sentence, from GET / alone (this
    server answers nothing else: a health wait first would have failed with another message)."""
    with pytest.raises(UnsupportedEngine) as err:
        connect(ConnectionSettings(url=old_server))
    assert str(err.value) == (
        f"{old_server} runs Elasticsearch 7.10.2: expected 7.17 or newer (7.17 is the oldest release that "
        "speaks the REST compatibility headers), found 7.10.2; upgrade the cluster, or point --url at a newer one"
    )


def test_elastic_serverless_is_detected_from_its_build_flavor(serverless_server: str) -> None:
    settings = ConnectionSettings(url=serverless_server)
    info = detect(settings)
    assert (info.product, info.serverless, info.build_flavour) == ("elasticsearch", True, "serverless")
    check_floor(info, settings)  # a serverless project is not versioned: no floor


def test_the_elasticsearch_client_refuses_opensearch(os_settings: ConnectionSettings) -> None:
    # why detection comes first: elasticsearch-py will not talk to OpenSearch at all
    backend = backend_class("elasticsearch")(os_settings)
    try:
        with pytest.raises(UnsupportedEngine, match=r"is not Elasticsearch"):
            backend.info()
    finally:
        backend.close()
