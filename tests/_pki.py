"""The test PKI: a secured managed node (x-pack security on, TLS on HTTP and transport, a known ``elastic``
password) for the reliability tests; it needs the dev-only ``cryptography``, so it lives with the tests.

The pieces, each usable on its own:

* :func:`make_local_pki` makes a throw-away CA and a CA-signed node certificate
  for ``127.0.0.1``/``localhost`` (Python's ``cryptography``; for tests,
  never for production);
* :func:`bootstrap_keystore` runs the distribution's own
  ``elasticsearch-keystore add -x -f bootstrap.password`` (the password goes in
  on stdin, never on a command line) and returns the keystore's bytes;
* :func:`security_settings` gives the ``elasticsearch.yml`` settings and the
  config-folder files for those;
* :func:`secured_engine_config` puts them together into an :class:`EngineConfig`
  whose node serves ``https`` and accepts ``elastic`` with the given password;
* :func:`wait_secured` waits, with credentials, until such a node is healthy
  (``ManagedNode.start`` only waits for the port when the scheme is https).

This build of Elasticsearch does not read ``ELASTIC_PASSWORD`` from the
environment (only the Docker image's entrypoint does); the keystore's
``bootstrap.password`` is what the reserved realm honours until a password is
stored in the ``.security`` index.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import ipaddress
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from base import ConfigError, ConnectionFailed, Secret
from indexer import Backend, ConnectionSettings, connect
from indexer.node import (
    EngineConfig,
    EngineError,
    ManagedNode,
    NodeDiedError,
    find_distribution,
    find_java,
    unpack_distribution,
)

#: where the files go, relative to the node's config folder
CERT_DIR = "certs"
CA_CERT_FILE = f"{CERT_DIR}/ca.crt"
NODE_CERT_FILE = f"{CERT_DIR}/node.crt"
NODE_KEY_FILE = f"{CERT_DIR}/node.key"
KEYSTORE_FILE = "elasticsearch.keystore"
SUPERUSER = "elastic"
#: the reserved realm refuses shorter passwords
MIN_PASSWORD_LENGTH = 6


@dataclass(frozen=True, slots=True)
class LocalPki:
    """PEM bytes of a CA and of one node certificate it signed (with its unencrypted key)."""

    ca_cert_pem: bytes
    node_cert_pem: bytes
    node_key_pem: bytes = dataclasses.field(repr=False)

    def write_ca(self, path: Path) -> Path:
        """Write the CA certificate (what clients trust) and return its path."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.ca_cert_pem)
        return path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey, days: int
) -> x509.CertificateBuilder:
    """A certificate valid from five minutes ago for ``days`` days, for ``key``'s public half."""
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
    )


#: a CA key may sign certificates and revocation lists, nothing else
_CA_USAGE = x509.KeyUsage(
    digital_signature=False,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=True,
    crl_sign=True,
    encipher_only=False,
    decipher_only=False,
)


def _ca(ca_name: str, days: int) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _builder(_name(ca_name), _name(ca_name), key, days)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_CA_USAGE, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _node_cert(
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    key: ec.EllipticCurvePrivateKey,
    hosts: Sequence[str],
    ips: Sequence[str],
    days: int,
) -> x509.Certificate:
    alt_names: list[x509.GeneralName] = [x509.DNSName(h) for h in hosts]
    alt_names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    usage = x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH])
    return (
        _builder(_name(hosts[0] if hosts else ips[0]), ca_cert.subject, key, days)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(usage, critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )


def make_local_pki(
    hosts: Sequence[str] = ("localhost",),
    ips: Sequence[str] = ("127.0.0.1",),
    days: int = 7,
    ca_name: str = "r2med-harness local CA",
) -> LocalPki:
    """A fresh CA and a node certificate for ``hosts``/``ips`` (server and client use, for TLS on both layers)."""
    ca_key, ca_cert = _ca(ca_name, days)
    node_key = ec.generate_private_key(ec.SECP256R1())
    node_cert = _node_cert(ca_key, ca_cert, node_key, hosts, ips, days)
    return LocalPki(
        ca_cert_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        node_cert_pem=node_cert.public_bytes(serialization.Encoding.PEM),
        node_key_pem=node_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def bootstrap_keystore(home: Path, java_home: Path, password: Secret, timeout_s: float = 120.0) -> bytes:
    """An ``elasticsearch.keystore`` holding ``bootstrap.password``, made by the distribution's own tool."""
    if len(password.reveal()) < MIN_PASSWORD_LENGTH:
        raise ConfigError(
            f"expected a password of at least {MIN_PASSWORD_LENGTH} characters for the {SUPERUSER!r} user, "
            f"found {len(password.reveal())}"
        )
    tool = home / "bin" / "elasticsearch-keystore"
    if not tool.is_file():
        raise EngineError(f"{tool} is missing: this distribution cannot make a keystore")
    with tempfile.TemporaryDirectory(prefix="r2med-keystore-") as tmp:
        env = dict(os.environ)
        env.update({"ES_JAVA_HOME": str(java_home), "ES_PATH_CONF": tmp})
        env.pop("JAVA_HOME", None)
        try:
            proc = subprocess.run(
                [str(tool), "add", "--stdin", "--force", "bootstrap.password"],
                input=password.reveal(),
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout_s,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EngineError(f"{tool} did not run: {exc}") from None
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().replace(password.reveal(), "***")
            raise EngineError(f"{tool} add bootstrap.password exited with code {proc.returncode}: {detail}")
        return (Path(tmp) / KEYSTORE_FILE).read_bytes()


def security_settings(
    pki: LocalPki, keystore: bytes, *, transport_tls: bool = True
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(elasticsearch.yml settings, config-folder files) for security with TLS on HTTP (and transport)."""
    settings: dict[str, Any] = {
        "xpack.security.enabled": True,
        "xpack.security.enrollment.enabled": False,
        "xpack.security.http.ssl.enabled": True,
        "xpack.security.http.ssl.key": NODE_KEY_FILE,
        "xpack.security.http.ssl.certificate": NODE_CERT_FILE,
        "xpack.security.http.ssl.certificate_authorities": [CA_CERT_FILE],
        "xpack.security.authc.api_key.enabled": True,
    }
    if transport_tls:
        settings.update(
            {
                "xpack.security.transport.ssl.enabled": True,
                # the node certificate names 127.0.0.1/localhost, not each node: check the chain, not the name
                "xpack.security.transport.ssl.verification_mode": "certificate",
                "xpack.security.transport.ssl.key": NODE_KEY_FILE,
                "xpack.security.transport.ssl.certificate": NODE_CERT_FILE,
                "xpack.security.transport.ssl.certificate_authorities": [CA_CERT_FILE],
            }
        )
    files = {
        CA_CERT_FILE: pki.ca_cert_pem,
        NODE_CERT_FILE: pki.node_cert_pem,
        NODE_KEY_FILE: pki.node_key_pem,
        KEYSTORE_FILE: keystore,
    }
    return settings, files


def secured_engine_config(
    base: EngineConfig, pki: LocalPki, password: Secret, *, transport_tls: bool = True
) -> EngineConfig:
    """``base`` with security, TLS and the ``elastic`` bootstrap password added; its scheme is https."""
    java = find_java(base.java_home)
    home = unpack_distribution(find_distribution(base.distribution, base.cache_dir), base.state_dir)
    keystore = bootstrap_keystore(home, java.home, password)
    settings, files = security_settings(pki, keystore, transport_tls=transport_tls)
    return dataclasses.replace(
        base,
        scheme="https",
        settings={**base.settings, **settings},
        config_files={**base.config_files, **files},
    )


def wait_secured(
    settings: ConnectionSettings,
    node: ManagedNode | None = None,
    timeout_s: float = 120.0,
    wait_for_status: str = "yellow",
) -> Backend:
    """A connected backend once the secured node answers health with these credentials.

    Retries while the node is still coming up; a node that died raises
    :class:`NodeDiedError` with its log, a timeout the last :class:`ConnectionFailed`.
    """
    deadline = time.monotonic() + timeout_s
    last: ConnectionFailed | None = None
    while time.monotonic() < deadline:
        if node is not None and not node.status().running:
            raise NodeDiedError(f"the secured node stopped while starting. Last log lines:\n{node.logs()}")
        try:
            return connect(settings, wait_for_status=wait_for_status, timeout_s=5)
        except ConnectionFailed as exc:
            last = exc
            time.sleep(0.5)
    raise ConnectionFailed(
        f"the secured node at {settings.url} did not become {wait_for_status} within {timeout_s:.0f}s"
    ) from last
