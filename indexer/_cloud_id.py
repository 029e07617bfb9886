"""Elastic Cloud's Cloud ID: ``NAME:BASE64``, the base64 of ``HOST[:PORT]$ES_UUID[:PORT]$KIBANA_UUID``.

The deployment's Elasticsearch is ``https://ES_UUID.HOST:PORT`` (443 unless a port is written). The
harness turns a Cloud ID into that URL once, when the settings are made, so detection, the clients
and every message use the same URL; a Cloud ID that does not decode says what was expected.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from base import ConfigError

CLOUD_PORT = 443
_EXPECTED = (
    "expected NAME:BASE64 as the Elastic Cloud console shows it (BASE64 decodes to HOST$ES_UUID$KIBANA_UUID)"
)


@dataclass(frozen=True, slots=True)
class CloudId:
    """A decoded Cloud ID: the deployment's name and its Elasticsearch endpoint."""

    name: str
    host: str
    es_uuid: str
    port: int

    @property
    def url(self) -> str:
        return f"https://{self.es_uuid}.{self.host}:{self.port}"


def _port(text: str, cloud_id: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ConfigError(f"connection.cloud_id={cloud_id!r}: {_EXPECTED}, found the port {text!r}")
    return int(text)


def _split_port(part: str, cloud_id: str) -> tuple[str, int | None]:
    head, sep, tail = part.rpartition(":")
    return (head, _port(tail, cloud_id)) if sep else (part, None)


def parse_cloud_id(cloud_id: str) -> CloudId:
    """Decode ``cloud_id``; a :class:`~base.ConfigError` naming what was expected and found otherwise."""
    text = cloud_id.strip()
    name, sep, encoded = text.partition(":")
    if not sep or not name or not encoded:
        raise ConfigError(f"connection.cloud_id={cloud_id!r}: {_EXPECTED}, found no NAME: prefix")
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ConfigError(
            f"connection.cloud_id={cloud_id!r}: {_EXPECTED}, found text after NAME: that is not base64"
        ) from None
    parts = decoded.split("$")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise ConfigError(
            f"connection.cloud_id={cloud_id!r}: {_EXPECTED}, found {len(parts)} part(s) in {decoded!r}"
        )
    host, host_port = _split_port(parts[0], cloud_id)
    es_uuid, es_port = _split_port(parts[1], cloud_id)
    if not host or not es_uuid or any(c in host + es_uuid for c in "/ @"):
        raise ConfigError(f"connection.cloud_id={cloud_id!r}: {_EXPECTED}, found {decoded!r}")
    return CloudId(name=name, host=host, es_uuid=es_uuid, port=es_port or host_port or CLOUD_PORT)
