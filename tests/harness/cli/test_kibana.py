"""``harness kibana import``: the request it sends, and its errors.

No Kibana runs here, so a local HTTP server stands in for the import endpoint and records
what arrives; the assertions are about our request (path, headers, multipart body).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from base import ConfigError, ConnectionFailed
from harness import RunError
from harness.cli import main
from harness.inspect import KibanaAuth, import_saved_objects, saved_object_files
from tests.harness.cli.old_names import deprecated, line


class _Endpoint(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []
    reply: ClassVar[dict[str, Any]] = {"success": True, "successCount": 6}

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).seen.append(
            {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        )
        data = json.dumps(type(self).reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def endpoint() -> Iterator[str]:
    _Endpoint.seen.clear()
    server = HTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_import_posts_each_file_with_xsrf_auth_and_multipart(endpoint: str) -> None:
    files = saved_object_files()
    results = import_saved_objects(endpoint, files, KibanaAuth(username="elastic", password="pw"))
    assert [r.file for r in results] == files and results[0].success_count == 6
    assert (
        len(_Endpoint.seen) == len(files) >= 2
    )  # the evaluation records' objects, the load metrics' objects
    request = _Endpoint.seen[0]
    assert request["path"] == "/api/saved_objects/_import?overwrite=true"
    assert request["headers"]["kbn-xsrf"] and request["headers"]["authorization"] == "Basic ZWxhc3RpYzpwdw=="
    assert request["headers"]["content-type"].startswith("multipart/form-data; boundary=")
    assert (
        files[0].read_bytes() in request["body"]
        and b'name="file"; filename="harness-eval.ndjson"' in request["body"]
    )


def test_cli_import_with_api_key(endpoint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kibana", "import", "--url", endpoint, "--api-key", "abc=="]) == 0
    assert _Endpoint.seen[0]["headers"]["authorization"] == "ApiKey abc=="
    assert "imported 6 object(s) from harness-eval.ndjson" in capsys.readouterr().out


def test_rejected_objects_are_listed(endpoint: str) -> None:
    _Endpoint.reply = {
        "success": False,
        "successCount": 5,
        "errors": [{"type": "dashboard", "id": "x", "error": {"type": "conflict"}}],
    }
    try:
        with pytest.raises(RunError, match=r"rejected 1: dashboard/x"):
            import_saved_objects(endpoint, saved_object_files())
    finally:
        _Endpoint.reply = {"success": True, "successCount": 6}


def test_connection_and_config_errors(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectionFailed, match=r"could not reach Kibana"):
        import_saved_objects(f"http://127.0.0.1:{port}", saved_object_files(), timeout=5)
    with pytest.raises(ConfigError, match=r"must start with http"):
        import_saved_objects("localhost:5601", saved_object_files())
    with pytest.raises(ConfigError, match=r"not both"):
        KibanaAuth(username="u", password="p", api_key="k").headers()
    with pytest.raises(ConfigError, match=r"expected \*.ndjson files"):
        saved_object_files(tmp_path)


def test_cli_import_logs_in_with_the_compose_stacks_password(
    endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`docker compose up` writes the elastic password; Kibana takes the same login without an export."""
    stack = tmp_path / "stack.env"
    stack.write_text("ES_URL=https://127.0.0.1:9200\nES_USERNAME=elastic\nES_PASSWORD=pw\n", encoding="utf-8")
    monkeypatch.setenv("R2MED_STACK_ENV", str(stack))
    for var in ("KIBANA_USERNAME", "KIBANA_PASSWORD", "KIBANA_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert main(["kibana", "import", "--url", endpoint]) == 0
    assert _Endpoint.seen[0]["headers"]["authorization"] == "Basic ZWxhc3RpYzpwdw=="
    assert f"logging in as elastic (from {stack})" in capsys.readouterr().err
    _Endpoint.seen.clear()
    assert main(["kibana", "import", "--url", endpoint, "--api-key", "abc=="]) == 0  # what is given wins
    assert _Endpoint.seen[0]["headers"]["authorization"] == "ApiKey abc=="


def test_the_old_names_user_and_dir_work_for_one_release(
    endpoint: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """--user is --username now, --dir (a folder read, not written) --saved-objects: each old one prints
    one line and sends what the new one sends."""
    folder = tmp_path / "objects"
    folder.mkdir()
    first = saved_object_files()[0]
    (folder / first.name).write_bytes(first.read_bytes())
    sent = []
    for spelled in (["--username", "elastic", "--saved-objects"], ["--user", "elastic", "--dir"]):
        _Endpoint.seen.clear()
        assert main(["kibana", "import", "--url", endpoint, "--password", "pw", *spelled, str(folder)]) == 0
        sent.append(
            [(r["headers"]["authorization"], r["body"].count(first.read_bytes())) for r in _Endpoint.seen]
        )
        assert deprecated(capfd.readouterr().err) == (
            []
            if spelled[0] == "--username"
            else [line("--user", "--username"), line("--dir", "--saved-objects")]
        )
    assert sent[0] == sent[1] == [("Basic ZWxhc3RpYzpwdw==", 1)]
