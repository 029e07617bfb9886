from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError, EngineUnavailable, Secret
from indexer import Backend, ConnectionSettings, connect


def test_precedence_flags_over_env_over_file(tmp_path: Path) -> None:
    cfg = tmp_path / "h.toml"
    cfg.write_text('[connection]\nurl = "http://file:9200"\nusername = "fileuser"\npassword = "filepw"\n')
    s = ConnectionSettings.resolve({}, env={}, config_file=cfg)
    assert (s.url, s.username) == ("http://file:9200", "fileuser")
    s = ConnectionSettings.resolve({}, env={"ES_URL": "http://env:9200"}, config_file=cfg)
    assert s.url == "http://env:9200"
    s = ConnectionSettings.resolve(
        {"url": "http://flag:9200"}, env={"ES_URL": "http://env:9200"}, config_file=cfg
    )
    assert s.url == "http://flag:9200"


def test_secrets_never_print() -> None:
    s = ConnectionSettings.resolve({"username": "elastic", "password": "hunter2-secret"}, env={})
    assert isinstance(s.password, Secret)
    assert "hunter2-secret" not in repr(s)
    assert "hunter2-secret" not in str(s.redacted())
    assert s.redacted()["auth"] == "basic"
    k = ConnectionSettings.resolve({"api_key": "c2VjcmV0a2V5"}, env={})
    assert "c2VjcmV0a2V5" not in repr(k) and k.redacted()["auth"] == "api_key"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"url": "localhost:9200"},
            r"expected an Elasticsearch or OpenSearch URL like http://host:9200, found 'localhost:9200'",
        ),
        ({"url": "http://u:p@h:9200"}, r"credentials inside the URL are not accepted"),
        ({"password": "x"}, r"password was given without a username"),
        ({"username": "u", "password": "p", "api_key": "k"}, r"either basic auth .* or an API key"),
        (
            {"ca_cert": "/no/such/ca.pem"},
            r"CA certificate file not found: expected a PEM file at /no/such/ca.pem",
        ),
        ({"verify_certs": "maybe"}, r"expected a boolean .* found 'maybe'"),
    ],
)
def test_bad_settings_are_clear(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ConnectionSettings.resolve(flags, env={})


def test_unreachable_url_is_clear() -> None:
    with pytest.raises(
        EngineUnavailable, match=r"cannot reach a search engine at http://127.0.0.1:9\b"
    ) as info:
        connect(ConnectionSettings(url="http://127.0.0.1:9", request_timeout=2), timeout_s=1)
    assert "harness engine start" in str(info.value)


def test_connect_chooses_the_backend_the_cluster_names(backend: Backend, engine_url: str) -> None:
    """No flag names the engine: the same call returns the backend of whichever engine answers."""
    opened = connect(ConnectionSettings(url=engine_url))
    try:
        assert opened.product == backend.product
        assert opened.health().status in {"green", "yellow"}
    finally:
        opened.close()
