"""Importing our Kibana saved objects (``docker/kibana/*.ndjson``) through Kibana's import API."""

from __future__ import annotations

import base64
import json
import ssl
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib import error, request

from base import ConfigError, ConnectionFailed
from harness._errors import RunError

#: Where the saved objects live in a checkout (``docker/kibana``).
SAVED_OBJECTS_DIR = Path(__file__).resolve().parents[2] / "docker" / "kibana"
IMPORT_PATH = "/api/saved_objects/_import?overwrite=true"


@dataclass(frozen=True)
class KibanaAuth:
    """Basic auth (``username``/``password``) or an encoded API key; TLS trust via ``ca_cert``."""

    username: str | None = None
    password: str | None = None
    api_key: str | None = None
    ca_cert: Path | None = None
    verify: bool = True

    def headers(self) -> dict[str, str]:
        if self.api_key and (self.username or self.password):
            raise ConfigError("give either --api-key or --username/--password for Kibana, not both")
        if self.api_key:
            return {"Authorization": f"ApiKey {self.api_key}"}
        if self.username or self.password:
            if not (self.username and self.password):
                raise ConfigError("Kibana basic auth needs both --username and --password")
            token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")
            return {"Authorization": f"Basic {token}"}
        return {}

    def ssl_context(self) -> ssl.SSLContext | None:
        if self.ca_cert is not None:
            if not self.ca_cert.is_file():
                raise ConfigError(f"CA certificate {self.ca_cert} does not exist: expected a PEM file")
            return ssl.create_default_context(cafile=str(self.ca_cert))
        if not self.verify:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return ctx
        return None


@dataclass(frozen=True)
class ImportResult:
    file: Path
    success_count: int


def saved_object_files(directory: Path = SAVED_OBJECTS_DIR) -> list[Path]:
    """The ``*.ndjson`` files of ``directory`` in name order (at least one, or ConfigError)."""
    files = sorted(Path(directory).glob("*.ndjson"))
    if not files:
        raise ConfigError(f"no saved objects to import: expected *.ndjson files in {directory}, found none")
    return files


def _multipart(path: Path) -> tuple[bytes, str]:
    boundary = f"----r2med-{uuid.uuid4().hex}"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n'
        "Content-Type: application/ndjson\r\n\r\n"
    ).encode()
    return head + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode(), boundary


def import_saved_objects(
    url: str, files: Sequence[Path], auth: KibanaAuth = KibanaAuth(), *, timeout: float = 60.0
) -> list[ImportResult]:
    """POST each file to ``URL/api/saved_objects/_import?overwrite=true``; raise on any object error."""
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"Kibana URL must start with http:// or https://, found {url!r}")
    headers = {"kbn-xsrf": "r2med-harness", **auth.headers()}
    context = auth.ssl_context()
    results = []
    for path in files:
        body, boundary = _multipart(path)
        req = request.Request(
            url.rstrip("/") + IMPORT_PATH,
            data=body,
            method="POST",
            headers={**headers, "Content-Type": f"multipart/form-data; boundary={boundary}"},
        )
        try:
            with request.urlopen(req, timeout=timeout, context=context) as resp:
                payload: dict[str, Any] = json.loads(resp.read().decode("utf-8") or "{}")
        except error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500]
            hint = " (check --username/--password or --api-key)" if exc.code in (401, 403) else ""
            raise ConnectionFailed(
                f"Kibana rejected the import of {path.name}: HTTP {exc.code}{hint}: {detail}"
            ) from exc
        except (error.URLError, OSError) as exc:
            raise ConnectionFailed(f"could not reach Kibana at {url} to import {path.name}") from exc
        if not payload.get("success", False):
            problems = [
                f"{e.get('type')}/{e.get('id')}: {json.dumps(e.get('error'))}"
                for e in payload.get("errors") or []
            ]
            raise RunError(
                f"Kibana imported {payload.get('successCount', 0)} object(s) of {path.name} and rejected "
                f"{len(problems)}: " + "; ".join(problems)
            )
        results.append(ImportResult(path, int(payload.get("successCount", 0))))
    return results
