"""Security against a real secured node: basic auth, API keys, verified TLS, clear errors, no leaked secret."""

from __future__ import annotations

import base64
import secrets
from pathlib import Path

import pytest
from elasticsearch import BadRequestError

from base import ConfigError, ConnectionFailed, Secret
from harness.cli import main as harness_main
from indexer import ConnectionSettings, connect
from tests._pki import make_local_pki
from tests._support import ndjson, raw_es_client
from tests.reliability._nodes import SecuredNode
from tests.reliability._secrets import assert_no_secret, find_secret

INDEX = "test-reliability-secure"


def test_basic_auth_over_verified_tls(secured_node: SecuredNode) -> None:
    settings = secured_node.settings()
    assert settings.url.startswith("https://") and settings.verify_certs
    backend = connect(settings)
    try:
        # the connection really is TLS, verified against the CA made in the test
        assert backend.product == "elasticsearch" and backend.health().status in {"green", "yellow"}
    finally:
        backend.close()
    who = raw_es_client(settings).security.authenticate()
    assert who["username"] == "elastic"
    assert who["authentication_type"] == "realm"


def test_plain_http_to_the_tls_port_is_refused_clearly(secured_node: SecuredNode) -> None:
    settings = secured_node.settings(url=secured_node.url.replace("https://", "http://"), ca_cert=None)
    with pytest.raises(ConnectionFailed) as info:
        connect(settings, wait_for_status=None)
    assert secured_node.url.replace("https://", "http://") in str(info.value)
    assert not find_secret([str(info.value), repr(info.value)], secured_node.password, "elastic")


#: this stripped integ-test build lacks the analysis-common module, and the .security system index
#: (where API keys live) needs its ``pattern_capture`` filter: creating any API key fails there.
_NO_SECURITY_INDEX = "Unknown filter type [pattern_capture]"


def test_api_key_created_by_elastic_works(secured_node: SecuredNode) -> None:
    admin = raw_es_client(secured_node.settings())
    try:
        created = admin.security.create_api_key(name="pytest-reliability", expiration="1h")
    except BadRequestError as exc:
        # only the one known limitation of this build may stop the test; anything else fails it
        assert _NO_SECURITY_INDEX in str(exc), exc
        pytest.skip(
            "this Elasticsearch build cannot create the .security index (no analysis-common module: "
            f"{_NO_SECURITY_INDEX}), so it cannot store API keys; the ApiKey path is covered by "
            "test_invalid_api_key_is_a_clear_error_without_the_secret"
        )
    encoded = Secret(created["encoded"])
    settings = ConnectionSettings(url=secured_node.url, api_key=encoded, ca_cert=secured_node.ca_cert)
    assert settings.redacted()["auth"] == "api-key"
    assert not find_secret(repr(settings) + str(settings.redacted()), encoded)
    who = raw_es_client(settings).security.authenticate()
    assert who["authentication_type"] == "api_key"
    assert who["api_key"]["name"] == "pytest-reliability"
    # the key can do real work through the backend: index and count
    backend = connect(settings)
    backend.delete_index(INDEX, missing_ok=True)
    try:
        lines = [
            x for i in range(5) for x in ({"index": {"_index": INDEX, "_id": str(i)}}, {"text": f"dose {i}"})
        ]
        assert not backend.bulk(ndjson(lines)).failed
        backend.refresh(INDEX)
        assert backend.count(INDEX) == 5
    finally:
        backend.delete_index(INDEX, missing_ok=True)
        backend.close()
    # an invalidated key is refused with the same clear error
    admin.security.invalidate_api_key(ids=[created["id"]])
    with pytest.raises(ConnectionFailed, match="HTTP 401"):
        connect(settings, wait_for_status=None)


def test_invalid_api_key_is_a_clear_error_without_the_secret(secured_node: SecuredNode) -> None:
    # a well-formed key (base64 of id:key) the cluster never issued, sent over verified TLS
    key_id, key = "pytestKeyId0123456789", secrets.token_urlsafe(22)
    encoded = Secret(base64.b64encode(f"{key_id}:{key}".encode()).decode())
    settings = ConnectionSettings(url=secured_node.url, api_key=encoded, ca_cert=secured_node.ca_cert)
    with pytest.raises(ConnectionFailed) as info:
        connect(settings)
    message = str(info.value)
    assert "HTTP 401" in message and "auth method: api-key" in message
    for secret in (encoded, key):
        assert_no_secret([message, repr(info.value), repr(settings), str(settings.redacted())], secret)


def test_wrong_password_is_a_clear_error_without_the_secret(secured_node: SecuredNode) -> None:
    wrong = Secret("wr0ng-" + secured_node.password.reveal()[::-1])
    settings = secured_node.settings(password=wrong)
    with pytest.raises(ConnectionFailed) as info:
        connect(settings)
    message = str(info.value)
    assert "HTTP 401" in message and secured_node.url in message
    assert "username/password" in message
    for secret in (wrong, secured_node.password):
        assert_no_secret(
            [message, repr(info.value), repr(settings), str(settings.redacted())], secret, "elastic"
        )


@pytest.mark.parametrize("trust", ["system store", "another CA"])
def test_untrusted_certificate_is_a_clear_tls_error(
    secured_node: SecuredNode, trust: str, tmp_path: Path
) -> None:
    ca = (
        None
        if trust == "system store"
        else make_local_pki(ca_name="not the node's CA").write_ca(tmp_path / "other.crt")
    )
    settings = secured_node.settings(ca_cert=ca)
    with pytest.raises(ConnectionFailed) as info:
        connect(settings, wait_for_status=None)
    message = str(info.value)
    assert "trusted TLS connection" in message and secured_node.url in message
    assert "--ca-cert" in message
    assert "CERTIFICATE_VERIFY_FAILED" in message or "certificate verify failed" in message
    assert_no_secret([message, repr(info.value)], secured_node.password, "elastic")


def test_missing_ca_file_is_a_config_error(secured_node: SecuredNode, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "ca.crt"
    with pytest.raises(ConfigError, match="CA certificate file not found") as info:
        secured_node.settings(ca_cert=missing)
    assert str(missing) in str(info.value)
    env = {
        "ES_URL": secured_node.url,
        "ES_USERNAME": "elastic",
        "ES_PASSWORD": secured_node.password.reveal(),
        "ES_CA_CERT": str(missing),
    }
    with pytest.raises(ConfigError) as from_env:
        ConnectionSettings.resolve(env=env)
    assert str(missing) in str(from_env.value)
    assert_no_secret(str(from_env.value), secured_node.password)


def test_cli_never_prints_the_secret(
    secured_node: SecuredNode, capfd: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `harness kibana import` pointed at the secured Elasticsearch (no Kibana API there): wrong and right password
    saved = tmp_path / "objects"
    saved.mkdir()
    (saved / "one.ndjson").write_text('{"type":"index-pattern","id":"x","attributes":{"title":"x"}}\n')
    wrong = "Wr0ng-" + secured_node.password.reveal()[:8]
    codes = []
    for password in (wrong, secured_node.password.reveal()):
        codes.append(
            harness_main(
                [
                    "kibana", "import", "--url", secured_node.url, "--user", "elastic",
                    "--password", password, "--ca-cert", str(secured_node.ca_cert), "--dir", str(saved),
                ]
            )
        )  # fmt: skip
    out = capfd.readouterr()
    assert all(code != 0 for code in codes), codes
    assert "HTTP 401" in out.err  # the wrong password is named as an auth failure
    assert "HTTP 400" in out.err  # the right one gets through verified TLS to a server with no Kibana API
    for secret in (wrong, secured_node.password.reveal()):
        assert_no_secret([out.out, out.err], secret, "elastic")


def test_secrets_absent_from_node_logs_and_config(secured_node: SecuredNode) -> None:
    # runs last in this module: every request above (good and bad credentials) has been logged by now
    logs = secured_node.node_dir / "logs"
    config = secured_node.node_dir / "config"
    scanned = assert_no_secret([logs, config], secured_node.password, "elastic")
    assert scanned >= 3  # console log, server log, elasticsearch.yml at least
    assert (config / "elasticsearch.keystore").is_file()


def test_assert_no_secret_finds_leaks(tmp_path: Path) -> None:
    secret = "s3cret-value-123"
    (tmp_path / "run" / "deep").mkdir(parents=True)
    (tmp_path / "run" / "clean.json").write_text('{"auth": "basic"}')
    assert_no_secret(tmp_path / "run", secret, "elastic")
    header = "Authorization: Basic " + base64.b64encode(f"elastic:{secret}".encode()).decode()
    (tmp_path / "run" / "deep" / "trace.log").write_text(header)
    assert find_secret(tmp_path / "run", secret, "elastic") == [str(tmp_path / "run" / "deep" / "trace.log")]
    with pytest.raises(AssertionError, match=r"trace\.log"):
        assert_no_secret(tmp_path, secret, "elastic")
    assert find_secret(["fine", f"oops {secret}"], secret) == ["<text #1>"]


def test_insecure_skips_verification_only_when_asked(secured_node: SecuredNode) -> None:
    settings = secured_node.settings(ca_cert=None, verify=False)
    assert settings.redacted()["verify_certs"] is False
    connect(settings).close()
    assert raw_es_client(settings).security.authenticate()["username"] == "elastic"


def test_backend_detection_over_verified_tls(secured_node: SecuredNode) -> None:
    """The Backend seam on a secured cluster: detection and client both use the credentials and the CA."""
    backend = connect(secured_node.settings())
    try:
        assert backend.product == "elasticsearch" and backend.health().status in {"green", "yellow"}
        assert backend.probe().version.startswith("9.")
    finally:
        backend.close()
    with pytest.raises(ConnectionFailed, match=r"could not establish a trusted TLS connection") as untrusted:
        connect(secured_node.settings(ca_cert=None))
    wrong = Secret("not-the-" + secrets.token_urlsafe(8))
    with pytest.raises(ConnectionFailed, match=r"rejected the credentials \(HTTP 401\)") as refused:
        connect(secured_node.settings(password=wrong))
    texts = [str(untrusted.value), str(refused.value), repr(refused.value)]
    assert not find_secret(texts, secured_node.password, "elastic") and not find_secret(texts, wrong)
