"""The pieces of the test PKI (tests/_pki.py) that need no running node."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature

from base import ConfigError, Secret
from tests._pki import (
    CA_CERT_FILE,
    KEYSTORE_FILE,
    NODE_KEY_FILE,
    bootstrap_keystore,
    make_local_pki,
    security_settings,
)


def test_local_pki_node_certificate_is_signed_by_its_ca_for_loopback() -> None:
    pki = make_local_pki()
    ca = x509.load_pem_x509_certificate(pki.ca_cert_pem)
    node = x509.load_pem_x509_certificate(pki.node_cert_pem)
    node.verify_directly_issued_by(ca)
    with pytest.raises(InvalidSignature):  # and not by another CA of the same name
        node.verify_directly_issued_by(x509.load_pem_x509_certificate(make_local_pki().ca_cert_pem))
    san = node.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert b"PRIVATE KEY" in pki.node_key_pem and b"PRIVATE KEY" not in pki.node_cert_pem
    assert "node_key_pem" not in repr(pki)


def test_security_settings_point_at_the_files_they_ship() -> None:
    settings, files = security_settings(make_local_pki(), b"keystore-bytes")
    assert settings["xpack.security.enabled"] is True
    assert settings["xpack.security.http.ssl.enabled"] is True
    assert settings["xpack.security.transport.ssl.enabled"] is True
    referenced = {v for k, v in settings.items() if k.endswith((".key", ".certificate"))}
    referenced |= {p for k, v in settings.items() if k.endswith("certificate_authorities") for p in v}
    assert referenced == {CA_CERT_FILE, NODE_KEY_FILE, "certs/node.crt"} <= set(files)
    assert files[KEYSTORE_FILE] == b"keystore-bytes"
    http_only, _ = security_settings(make_local_pki(), b"", transport_tls=False)
    assert not any(k.startswith("xpack.security.transport") for k in http_only)


def test_short_bootstrap_password_is_refused_before_any_tool_runs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="at least 6 characters") as info:
        bootstrap_keystore(tmp_path, tmp_path, Secret("abc12"))
    assert "abc12" not in str(info.value)
