"""Our exceptions from what a client saw: one function per kind of failure, shared by both backends.

Each backend has exactly one ``translate`` function that takes its client's
exception apart (status, error type, reason) and calls these; messages say what
was being done, where, and what came back, and never carry a secret.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Any

from base import ConnectionFailed, EngineUnavailable, HarnessError, NotFound, RequestFailed

_MAX = 300


def short(text: object) -> str:
    s = str(text)
    return s if len(s) <= _MAX else s[:_MAX] + "…"


def error_parts(body: Any) -> tuple[str | None, str]:
    """(type, reason) of an error body ``{"error": {"root_cause": [...], "type", "reason"}}`` or a string."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            causes = err.get("root_cause") or []
            first = causes[0] if causes and isinstance(causes[0], dict) else err
            etype = first.get("type") or err.get("type")
            reason = first.get("reason") or err.get("reason") or ""
            caused = err.get("caused_by")
            if isinstance(caused, dict) and caused.get("reason") and caused.get("reason") != reason:
                reason = f"{reason} (caused by {caused.get('type')}: {caused.get('reason')})"
            return (str(etype) if etype else None), str(reason)
        return None, str(err)
    return None, "" if body is None else str(body)


def auth_label(settings: Any) -> str:
    """How a request authenticated, for a 401 message: the method, and the file the credentials came from."""
    origin = f", from {settings.credentials_from}" if getattr(settings, "credentials_from", None) else ""
    return f"{settings.redacted()['auth']}{origin}"


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def http_failure(
    status: int,
    body: Any,
    *,
    what: str,
    url: str,
    product: str,
    auth: str,
    retry_after_s: float | None = None,
) -> HarnessError:
    """The exception for an HTTP error answer ``status`` to ``what`` (``retry_after_s``: the server's hint)."""
    etype, reason = error_parts(body)
    detail = f"{etype}: {reason}" if etype else reason
    if status == 401:
        return ConnectionFailed(
            f"{url} rejected the credentials (HTTP 401) while {what}: check the username/password or "
            f"API key (auth method: {auth})"
        )
    if status == 403:
        return ConnectionFailed(
            f"{url} refused access (HTTP 403) while {what}: the user lacks the privileges for it ({short(detail)})"
        )
    if status in (404, 410) and etype == "api_not_available_exception":
        return RequestFailed(
            f"{url} is serverless and refused the API used while {what} (HTTP {status} {etype}: {short(reason)}): "
            "expected an API the service offers, found it unavailable there; run this against a provisioned "
            "cluster, or report it (the harness should not ask a serverless project for it)",
            status=status,
            error_type=etype,
        )
    cls = NotFound if status == 404 else RequestFailed
    return cls(
        f"{product} at {url} answered HTTP {status} while {what}: {short(detail)}",
        status=status,
        error_type=etype,
        retry_after=retry_after_s,
    )


def unreachable(exc: BaseException, *, what: str, url: str, product: str, timeout: bool) -> HarnessError:
    if timeout:
        return EngineUnavailable(f"{product} at {url} did not answer in time while {what}: {short(exc)}")
    return EngineUnavailable(
        f"cannot reach {product} at {url} while {what}: {short(exc)}. Is it running? "
        "(`harness engine start` runs a local node; or set ES_URL)"
    )


def untrusted(exc: BaseException, *, url: str) -> HarnessError:
    return ConnectionFailed(
        f"could not establish a trusted TLS connection to {url}: {short(exc)}; "
        "pass the cluster's CA with --ca-cert (or ES_CA_CERT)"
    )
