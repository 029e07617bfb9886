"""Local stand-ins for the managed services, in front of a real engine node: real processes on 127.0.0.1.

None of Amazon OpenSearch Service, Amazon OpenSearch Serverless or Elastic Cloud Serverless can be reached
from these machines, so the harness's real client code is run against proxies that answer as those
services do at their edge, and forward everything else to a real Elasticsearch or OpenSearch node:

* ``sigv4`` (Amazon OpenSearch Service, service ``es``): every request must carry an AWS Signature
  Version 4 for the proxy's region and service, verified with botocore's own algorithm (canonical
  request, string to sign, HMAC chain) against the secret of the access key; the body must match its
  ``x-amz-content-sha256`` and the date must be within 15 minutes. A wrong signature, an unknown key or
  another scope is answered 403 with AWS's message, as the service does.
* ``aoss`` (Amazon OpenSearch Serverless): the same signature check for service ``aoss``, 404 at
  ``GET /``, 404 for ``/_cluster/*`` and ``/_nodes*``, and 400 for shard or replica settings.
* ``elastic-serverless`` (Elastic Cloud Serverless): an API key in ``Authorization: ApiKey ...`` (401
  otherwise), ``build_flavor: serverless`` at ``GET /``, 410 ``api_not_available_exception`` for
  ``/_cluster/*`` and ``/_nodes*``, and 400 for shard or replica settings.

What they do not emulate (the services' quotas, their other missing APIs, IAM policies, TLS, DNS) is listed
in docs/engines.md. Run one from the shell:

    python -m tests.engines._standins sigv4 --upstream http://127.0.0.1:9211 --port 9300
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import hmac
import json
import re
import sys
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import urllib3

MODES = ("sigv4", "aoss", "elastic-serverless")
REGION = "eu-west-1"
#: the access key and secret the SigV4 stand-ins accept (tests give the client the same, or another secret)
ACCESS_KEY = "AKIASTANDIN000000001"
SECRET_KEY = "standin/secret/key/of/the/sigv4/proxy00"
API_KEY = "c3RhbmRpbjpzZXJ2ZXJsZXNzLWtleQ=="
BAD_SIGNATURE = (
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret "
    "Access Key and signing method. Consult the service documentation for details."
)
_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request, "
    r"SignedHeaders=(?P<signed>[^,]+), Signature=(?P<signature>[0-9a-f]{64})"
)
_MANAGED = re.compile(r"number_of_shards|number_of_replicas")
_HOP = {"host", "authorization", "content-length", "connection", "transfer-encoding", "accept-encoding"}


def sigv4_refusal(method: str, url: str, headers: Mapping[str, str], body: bytes, service: str) -> str | None:
    """None when the request is signed for ``service`` in :data:`REGION` by :data:`ACCESS_KEY`; AWS's message
    otherwise. The signature is recomputed with botocore's SigV4 algorithm over the headers the request says
    it signed."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    match = _AUTH.fullmatch(headers.get("authorization", ""))
    if match is None:
        return "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters."
    if match["key"] != ACCESS_KEY:
        return "The security token included in the request is invalid."
    if match["region"] != REGION or match["service"] != service:
        return f"Credential should be scoped to a valid region and service ({REGION}/{service})."
    stamp = headers.get("x-amz-date", "")
    try:
        when = dt.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return "The request must carry a valid X-Amz-Date."
    if abs((dt.datetime.now(dt.UTC) - when).total_seconds()) > 900 or not stamp.startswith(match["date"]):
        return "Signature expired: the X-Amz-Date is more than 15 minutes from now."
    if headers.get("x-amz-content-sha256") != hashlib.sha256(body).hexdigest():
        return "The provided 'x-amz-content-sha256' header does not match what was computed."
    signed = match["signed"].split(";")
    request = AWSRequest(method=method, url=url, data=body, headers={h: headers.get(h, "") for h in signed})
    request.context["timestamp"] = stamp
    signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), service, REGION)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    return None if hmac.compare_digest(expected, match["signature"]) else BAD_SIGNATURE


class StandIn(BaseHTTPRequestHandler):
    """One request: the service's edge first (its auth, its missing APIs), then the real engine."""

    mode: str = "sigv4"
    upstream: str = ""
    pool: urllib3.PoolManager
    counts: dict[str, int]
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        for key, value in (headers or {"content-type": "application/json"}).items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(raw)

    def _count(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def _edge(self, headers: Mapping[str, str], body: bytes) -> tuple[int, Any] | None:
        """The service's own answer, or None to forward."""
        path = self.path.split("?", 1)[0]
        if self.mode in ("sigv4", "aoss"):
            url = f"http://{headers.get('host', '')}{self.path}"
            refused = sigv4_refusal(
                self.command, url, headers, body, "es" if self.mode == "sigv4" else "aoss"
            )
            if refused is not None:
                self._count("refused")
                return 403, {"message": refused}
        elif headers.get("authorization") != f"ApiKey {API_KEY}":
            self._count("refused")
            return 401, {
                "error": {
                    "type": "security_exception",
                    "reason": "unable to authenticate with provided credentials",
                },
                "status": 401,
            }
        if self.mode == "sigv4":
            return None
        if path == "/" and self.mode == "aoss":
            return 404, {
                "error": {"type": "not_found", "reason": "GET / is not available in OpenSearch Serverless"}
            }
        if path.startswith(("/_cluster", "/_nodes")):
            self._count("unavailable")
            status = 404 if self.mode == "aoss" else 410
            reason = f"Request for uri [{path}] with method [{self.command}] exists but is not available when running in serverless mode"
            return status, {
                "error": {"type": "api_not_available_exception", "reason": reason},
                "status": status,
            }
        if self.command == "PUT" and _MANAGED.search(body.decode(errors="replace")):
            return 400, {
                "error": {
                    "type": "illegal_argument_exception",
                    "reason": "Settings [index.number_of_shards, index.number_of_replicas] are not available when running in serverless mode",
                },
                "status": 400,
            }
        if path == "/" and self.mode == "elastic-serverless":
            return 200, self._serverless_root()
        return None

    def _serverless_root(self) -> dict[str, Any]:
        return {
            "name": "serverless",
            "cluster_name": "standin-project",
            "version": {"number": "8.11.0", "build_flavor": "serverless", "build_type": "docker"},
            "tagline": "You Know, for Search",
        }

    def _forward(self, headers: Mapping[str, str], body: bytes) -> None:
        sent = {
            k: v
            for k, v in headers.items()
            if k not in _HOP and not k.startswith("x-amz-") and k != "elastic-api-version"
        }
        resp = self.pool.request(
            self.command,
            self.upstream + self.path,
            body=body or None,
            headers=sent,
            retries=False,
            redirect=False,
        )
        keep = {k: v for k, v in resp.headers.items() if k.lower() not in _HOP}
        self._count("forwarded")
        self._answer(resp.status, resp.data, keep)

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        edge = self._edge(headers, body)
        if edge is not None:
            own = {"content-type": "application/json"}
            if self.mode == "elastic-serverless":  # Elastic names itself on every answer
                own["x-elastic-product"] = "Elasticsearch"
            self._answer(*edge, own)
            return
        self._forward(headers, body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


def serve(mode: str, upstream: str, port: int = 0) -> ThreadingHTTPServer:
    handler = type(
        "Handler",
        (StandIn,),
        {"mode": mode, "upstream": upstream.rstrip("/"), "pool": urllib3.PoolManager(), "counts": {}},
    )
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--upstream", required=True, help="the real engine node, e.g. http://127.0.0.1:9211")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = serve(args.mode, args.upstream, args.port)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
