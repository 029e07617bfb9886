"""Which engine answers at a URL: asked with one plain HTTP request, before any client is built.

Elasticsearch sets ``X-elastic-product: Elasticsearch`` on every answer (even the
405 that the stripped integ-test build gives to ``GET /``); OpenSearch sets
``X-OpenSearch-Version`` and names itself in ``GET /`` (``version.distribution``).
Neither client can do this for us: elasticsearch-py refuses a server without the
Elastic header, so it could not even say "this is OpenSearch".
"""

from __future__ import annotations

import base64
import json
import ssl

import urllib3

from base import ConnectionFailed, EngineUnavailable, UnsupportedEngine
from indexer._connection import ConnectionSettings
from indexer.backends._errors import auth_label, short

ELASTIC_HEADER = "x-elastic-product"
OPENSEARCH_HEADER = "x-opensearch-version"


def _headers(settings: ConnectionSettings) -> dict[str, str]:
    headers = {"accept": "application/json"}
    if settings.username is not None:
        raw = f"{settings.username}:{settings.password.reveal() if settings.password else ''}"
        headers["authorization"] = "Basic " + base64.b64encode(raw.encode()).decode()
    elif settings.api_key is not None:
        headers["authorization"] = f"ApiKey {settings.api_key.reveal()}"
    return headers


def _pool(settings: ConnectionSettings, timeout_s: float) -> urllib3.PoolManager:
    kwargs: dict[str, object] = {"timeout": urllib3.Timeout(total=timeout_s), "retries": False}
    if settings.url.startswith("https"):
        if settings.verify:
            kwargs["cert_reqs"] = ssl.CERT_REQUIRED
            if settings.ca_cert is not None:
                kwargs["ca_certs"] = str(settings.ca_cert)
        else:
            kwargs["cert_reqs"] = ssl.CERT_NONE
            kwargs["assert_hostname"] = False
    return urllib3.PoolManager(**kwargs)  # type: ignore[arg-type]


def detect_product(settings: ConnectionSettings, timeout_s: float = 10.0) -> str:
    """``"elasticsearch"`` or ``"opensearch"``; a clear error when the URL answers as neither."""
    url = settings.url.rstrip("/") + "/"
    try:
        with _pool(settings, timeout_s) as pool:
            resp = pool.request("GET", url, headers=_headers(settings))
    except urllib3.exceptions.SSLError as exc:
        raise ConnectionFailed(
            f"could not establish a trusted TLS connection to {settings.url}: {short(exc)}; "
            "pass the cluster's CA with --ca-cert (or ES_CA_CERT)"
        ) from None
    except urllib3.exceptions.HTTPError as exc:
        raise EngineUnavailable(
            f"cannot reach a search engine at {settings.url}: {short(exc)}. Is it running? "
            "(`harness engine start [--engine opensearch]` runs a local node; or set ES_URL)"
        ) from None
    headers = {k.lower(): v for k, v in resp.headers.items()}
    if headers.get(ELASTIC_HEADER, "").lower() == "elasticsearch":
        return "elasticsearch"
    if OPENSEARCH_HEADER in headers:
        return "opensearch"
    if resp.status == 401:
        raise ConnectionFailed(
            f"{settings.url} rejected the credentials (HTTP 401) before saying which engine it is: "
            f"check the username/password or API key (auth method: {auth_label(settings)})"
        )
    try:
        body = json.loads(resp.data)
    except ValueError:
        body = None
    distribution = body.get("version", {}).get("distribution") if isinstance(body, dict) else None
    if distribution == "opensearch":
        return "opensearch"
    raise UnsupportedEngine(
        f"the server at {settings.url} is neither Elasticsearch nor OpenSearch: GET / answered HTTP "
        f"{resp.status} without an {ELASTIC_HEADER} or {OPENSEARCH_HEADER} header, and no "
        f"version.distribution (body: {short(resp.data.decode(errors='replace'))})"
    )
