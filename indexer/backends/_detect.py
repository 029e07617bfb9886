"""What answers at a URL, asked before any client is built: product, version and flavour, then the floor.

One plain HTTP request (``GET /``) says it all on a full build: Elasticsearch names itself in the
``X-elastic-product`` header and its ``build_flavor`` (``serverless`` on Elastic Cloud Serverless),
OpenSearch in ``X-OpenSearch-Version`` and ``version.distribution``. Two builds need a second look:
Elasticsearch's stripped integ-test build answers ``GET /`` with 405 (its header still says what it is),
so its version comes from ``GET /_nodes/_local``; Amazon OpenSearch Serverless answers ``GET /`` with
404, which ``connection.service=aoss`` expects. Neither client could do this for us: elasticsearch-py
refuses a server without the Elastic header, and it speaks its own major's REST compatibility until told
the server's. Every refusal of ``GET /`` is one sentence: the URL, what was expected, what was found,
and what to do.
"""

from __future__ import annotations

import base64
import json
import ssl
from dataclasses import dataclass
from typing import Any

import urllib3

from base import ConfigError, ConnectionFailed, EngineUnavailable, UnsupportedEngine
from indexer._connection import ConnectionSettings
from indexer.backends._errors import auth_label, error_parts, short
from indexer.backends._types import EngineInfo

ELASTIC_HEADER = "x-elastic-product"
OPENSEARCH_HEADER = "x-opensearch-version"
SERVERLESS_FLAVOUR = "serverless"
#: the oldest version of each product the harness drives, and why
MIN_VERSIONS: dict[str, tuple[tuple[int, ...], str]] = {
    "elasticsearch": ((7, 17), "7.17 is the oldest release that speaks the REST compatibility headers"),
    "opensearch": ((2, 0), "OpenSearch 1.x has no Lucene k-NN engine and is end of life"),
}


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    headers: dict[str, str]
    data: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.data)
        except ValueError:
            return None

    @property
    def detail(self) -> str:
        body = self.json()
        if isinstance(body, dict) and isinstance(body.get("message"), str):  # AWS's own answers
            return short(body["message"].strip())
        etype, reason = error_parts(body)
        text = f"{etype}: {reason}" if etype else (reason or self.data.decode(errors="replace"))
        return short(text.strip()) or "no body"


def _auth_headers(settings: ConnectionSettings, method: str, url: str) -> dict[str, str]:
    if settings.auth_kind == "sigv4":
        from indexer.backends._sigv4 import SigV4Signer

        return SigV4Signer(settings).headers(method, url, None)
    if settings.username is not None:
        raw = f"{settings.username}:{settings.password.reveal() if settings.password else ''}"
        return {"authorization": "Basic " + base64.b64encode(raw.encode()).decode()}
    if settings.api_key is not None:
        return {"authorization": f"ApiKey {settings.api_key.reveal()}"}
    return {}


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


def _get(settings: ConnectionSettings, path: str, timeout_s: float) -> _Answer:
    url = settings.url.rstrip("/") + path
    headers = {"accept": "application/json", **_auth_headers(settings, "GET", url)}
    try:
        with _pool(settings, timeout_s) as pool:
            resp = pool.request("GET", url, headers=headers)
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
    return _Answer(resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.data)


def _refused(settings: ConnectionSettings, answer: _Answer) -> ConnectionFailed | None:
    """The sentence for a ``GET /`` that was refused (401, 403), or None."""
    url, kind = settings.url, settings.auth_kind
    if answer.status == 403 and kind == "sigv4":
        from indexer.backends._sigv4 import SigV4Signer

        signer = SigV4Signer(settings)
        return ConnectionFailed(
            f"{url} refused the SigV4 signature of access key {signer.access_key} (GET / answered HTTP 403: "
            f"{answer.detail}): expected credentials the service accepts for {signer.describe}, found them "
            "refused; check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID), connection.region and "
            "connection.service, and the domain's access policy"
        )
    if answer.status == 401:
        return ConnectionFailed(
            f"{url} rejected the credentials (GET / answered HTTP 401: {answer.detail}): expected a login it "
            f"accepts, found auth {auth_label(settings)} refused; check the username/password or API key "
            "(connection.username, connection.password, connection.api_key)"
        )
    if answer.status == 403:
        return ConnectionFailed(
            f"{url} refused access (GET / answered HTTP 403: {answer.detail}): expected a user allowed to read "
            f"the cluster's version (the `monitor` cluster privilege), found auth {auth_label(settings)} "
            "refused; grant the privilege, or connect as another user"
        )
    return None


def _not_found(settings: ConnectionSettings, answer: _Answer) -> UnsupportedEngine:
    return UnsupportedEngine(
        f"{settings.url} answered GET / with HTTP 404 ({answer.detail}): expected the root endpoint of "
        "Elasticsearch or OpenSearch, found nothing there; check the URL (no path after host:port), or, for "
        "Amazon OpenSearch Serverless, set connection.auth=sigv4 and connection.service=aoss"
    )


def _product(answer: _Answer) -> str | None:
    if answer.headers.get(ELASTIC_HEADER, "").lower() == "elasticsearch":
        return "elasticsearch"
    body = answer.json()
    version = body.get("version") if isinstance(body, dict) else None
    if OPENSEARCH_HEADER in answer.headers or (
        isinstance(version, dict) and version.get("distribution") == "opensearch"
    ):
        return "opensearch"
    return None


def _local_node(settings: ConnectionSettings, timeout_s: float) -> tuple[str, str]:
    """(version, build flavour) of the node that answers, for a build whose ``GET /`` says nothing."""
    path = "/_nodes/_local?filter_path=nodes.*.version,nodes.*.build_flavor,nodes.*.build_type"
    answer = _get(settings, path, timeout_s)
    refused = _refused(settings, answer)
    if refused is not None:
        raise refused
    nodes = (answer.json() or {}).get("nodes") or {}
    node: dict[str, Any] = next(iter(nodes.values()), {}) if isinstance(nodes, dict) else {}
    if answer.status != 200 or "version" not in node:
        raise UnsupportedEngine(
            f"{settings.url} did not say its version: GET / answered 405 and GET /_nodes/_local answered "
            f"HTTP {answer.status} ({answer.detail}); expected one of them to name it"
        )
    return str(node["version"]), str(node.get("build_flavor") or node.get("build_type") or "unknown")


def detect(settings: ConnectionSettings, timeout_s: float = 10.0) -> EngineInfo:
    """Product, version and flavour of the cluster at ``settings.url``; a clear error when it cannot say."""
    answer = _get(settings, "/", timeout_s)
    if answer.status == 404 and settings.sigv4_service == "aoss":  # Serverless has no GET /
        return EngineInfo("opensearch", "", SERVERLESS_FLAVOUR, serverless=True)
    refused = _refused(settings, answer)
    if refused is not None:
        raise refused
    product = _product(answer)
    if product is None:
        if answer.status == 404:
            raise _not_found(settings, answer)
        raise UnsupportedEngine(
            f"the server at {settings.url} is neither Elasticsearch nor OpenSearch: GET / answered HTTP "
            f"{answer.status} without an {ELASTIC_HEADER} or {OPENSEARCH_HEADER} header, and no "
            f"version.distribution (body: {short(answer.data.decode(errors='replace'))})"
        )
    body = answer.json()
    version = body.get("version") if isinstance(body, dict) else None
    if answer.status == 200 and isinstance(version, dict) and version.get("number"):
        flavour = str(version.get("build_flavor") or version.get("build_type") or "unknown")
        return EngineInfo(product, str(version["number"]), flavour, serverless=flavour == SERVERLESS_FLAVOUR)
    number, flavour = _local_node(settings, timeout_s)  # the stripped build's GET / is a 405
    return EngineInfo(product, number, flavour, serverless=flavour == SERVERLESS_FLAVOUR)


def check_floor(info: EngineInfo, settings: ConnectionSettings) -> None:
    """Refuse a cluster below the product's floor (before any other call), or one SigV4 cannot sign for."""
    if settings.auth_kind == "sigv4" and info.product != "opensearch":
        raise ConfigError(
            f"{settings.url} is {info.product} {info.version}: expected OpenSearch for connection.auth=sigv4 "
            "(SigV4 is Amazon OpenSearch Service's), found Elasticsearch; use an API key or basic auth"
        )
    if info.serverless or not info.version:
        return  # a serverless project is not versioned: its APIs are the service's
    floor, why = MIN_VERSIONS[info.product]
    if info.version_tuple < floor:
        display = "Elasticsearch" if info.product == "elasticsearch" else "OpenSearch"
        raise UnsupportedEngine(
            f"{settings.url} runs {display} {info.version}: expected {'.'.join(map(str, floor))} or newer ({why}), "
            f"found {info.version}; upgrade the cluster, or point --url at a newer one"
        )


def detect_product(settings: ConnectionSettings, timeout_s: float = 10.0) -> str:
    """``"elasticsearch"`` or ``"opensearch"`` (see :func:`detect`)."""
    return detect(settings, timeout_s).product
