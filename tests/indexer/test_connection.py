from __future__ import annotations

import base64
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
    assert "c2VjcmV0a2V5" not in repr(k) and k.redacted()["auth"] == "api-key"


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


def test_the_new_keys_read_alike_from_every_source(tmp_path: Path) -> None:
    """cloud_id, auth, region, service and verify: the config file, the environment and the flags (the
    experiment's connection table) give the same settings, highest source first."""
    cfg = tmp_path / "h.toml"
    cfg.write_text('[connection]\nurl = "https://search-x.eu-west-1.es.amazonaws.com"\nauth = "sigv4"\n')
    s = ConnectionSettings.resolve(
        {}, env={"AWS_REGION": "eu-west-1", "ES_AWS_SERVICE": "aoss"}, config_file=cfg
    )
    assert (s.auth_kind, s.region, s.sigv4_service) == ("sigv4", "eu-west-1", "aoss")
    assert s.redacted() | {"url": ""} == {
        "url": "",
        "username": None,
        "auth": "sigv4",
        "ca_cert": None,
        "verify_certs": True,
        "region": "eu-west-1",
        "service": "aoss",
    }
    s = ConnectionSettings.resolve(
        {"region": "us-east-1", "service": "es"}, env={"AWS_REGION": "eu-west-1"}, config_file=cfg
    )
    assert (s.region, s.sigv4_service) == ("us-east-1", "es")
    # verify, and its old name (config files written before the rename)
    assert ConnectionSettings.resolve({"verify": "false"}, env={}).verify is False
    old = tmp_path / "old.toml"
    old.write_text("[connection]\nverify_certs = false\n")
    assert ConnectionSettings.resolve({}, env={}, config_file=old).verify is False
    assert ConnectionSettings.resolve({}, env={"ES_VERIFY_CERTS": "0"}).verify is False


def make_cloud_id(name: str, host: str, es_uuid: str) -> str:
    """A Cloud ID as the Elastic Cloud console shows one: NAME:base64(HOST$ES_UUID$KIBANA_UUID)."""
    return f"{name}:{base64.b64encode(f'{host}${es_uuid}$kibana1'.encode()).decode()}"


def test_cloud_id_names_the_url() -> None:
    cloud = make_cloud_id("prod", "eu-west-1.aws.found.io:9243", "abc123")
    s = ConnectionSettings.resolve({"cloud_id": cloud, "api_key": "a2V5"}, env={})
    assert s.url == "https://abc123.eu-west-1.aws.found.io:9243" and s.auth_kind == "api-key"
    assert s.redacted()["cloud_id"] == "prod" and "a2V5" not in str(s.redacted())
    other = ConnectionSettings(cloud_id=make_cloud_id("x", "us-central1.gcp.cloud.es.io", "u1"))
    assert other.url == "https://u1.us-central1.gcp.cloud.es.io:443"
    assert s.with_url("http://127.0.0.1:9200").cloud_id is None


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            {"cloud_id": "no-colon"},
            r"connection.cloud_id='no-colon': expected NAME:BASE64 .* found no NAME: prefix",
        ),
        ({"cloud_id": "prod:%%%"}, r"found text after NAME: that is not base64"),
        ({"cloud_id": "prod:" + "b25seW9uZXBhcnQ="}, r"found 1 part\(s\) in 'onlyonepart'"),
        (
            {"cloud_id": make_cloud_id("p", "h.io", "u"), "url": "http://other:9200"},
            r"connection.cloud_id names https://u.h.io:443 and connection.url names http://other:9200",
        ),
        ({"auth": "kerberos"}, r"connection.auth: expected one of basic, api-key, sigv4, found 'kerberos'"),
        ({"auth": "basic"}, r"connection.auth=basic: expected a user"),
        ({"auth": "api-key"}, r"connection.auth=api-key: expected an API key"),
        (
            {"auth": "sigv4", "username": "u"},
            r"connection.auth=sigv4 signs every request with AWS credentials",
        ),
        (
            {"service": "aoss"},
            r"connection.service=aoss names a SigV4 service: expected connection.auth=sigv4",
        ),
        ({"auth": "sigv4", "service": "s3"}, r"connection.service: expected one of es, aoss"),
    ],
)
def test_bad_new_keys_are_one_sentence(flags: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ConnectionSettings.resolve(flags, env={})


def test_the_experiment_connection_table_takes_the_new_keys() -> None:
    """`harness run ... --set connection.auth=sigv4 --set connection.region=eu-west-1` builds these settings."""
    from harness.experiment import experiment

    exp = experiment(
        values={"mode": "lexical"},
        settings=[
            "connection.url=https://search-d.eu-west-1.es.amazonaws.com",
            "connection.auth=sigv4",
            "connection.region=eu-west-1",
            "connection.service=aoss",
            "connection.verify=false",
        ],
    )
    s = exp.connection_settings()
    assert (s.auth_kind, s.region, s.sigv4_service, s.verify) == ("sigv4", "eu-west-1", "aoss", False)
    with pytest.raises(ConfigError, match=r"connection.auth.*expected .*basic.*found 'kerberos'"):
        experiment(values={"mode": "lexical"}, settings=["connection.auth=kerberos"])
