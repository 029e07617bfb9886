"""AWS Signature Version 4 for Amazon OpenSearch Service (``es``) and OpenSearch Serverless (``aoss``).

Credentials come from botocore's standard chain, never from the harness's settings: the environment
(``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``), the shared files and
``AWS_PROFILE``, a container's or an instance's role. The region is ``connection.region`` (or
``AWS_REGION``), else the AWS configuration's (``AWS_DEFAULT_REGION``, the profile). Each request is
signed when it is sent (frozen credentials each time, so a role's rotation is followed), with the body's
SHA-256 in ``x-amz-content-sha256`` (OpenSearch Serverless requires it; the service domain accepts it).

botocore is an optional dependency (``pip install r2med-harness[aws]``): it is imported only when a
connection asks for ``auth=sigv4``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from base import ConfigError, ConnectionFailed
from indexer._connection import SIGV4_SERVICES, ConnectionSettings

#: the headers the signature covers besides ``host`` (the ones this module adds)
SIGNED_HEADERS = ("x-amz-date", "x-amz-content-sha256", "x-amz-security-token")


def _botocore() -> Any:
    try:
        import botocore.session
    except ImportError:
        raise ConfigError(
            "connection.auth=sigv4 signs with botocore: expected it installed, found none "
            "(pip install 'r2med-harness[aws]' or pip install botocore)"
        ) from None
    return botocore.session


class SigV4Signer:
    """Signs one request at a time for ``settings`` (its region and service), with the AWS chain's credentials."""

    def __init__(self, settings: ConnectionSettings) -> None:
        service = settings.sigv4_service
        if service is None:
            raise ConfigError(
                f"expected connection.auth=sigv4 to sign requests, found auth {settings.auth_kind}"
            )
        session = _botocore().Session()
        region = settings.region or session.get_config_variable("region")
        if not region:
            raise ConfigError(
                f"SigV4 for {settings.url} needs an AWS region: expected connection.region (or AWS_REGION, "
                "AWS_DEFAULT_REGION, the profile's region), found none; set --set connection.region=REGION"
            )
        credentials = session.get_credentials()
        if credentials is None:
            raise ConnectionFailed(
                f"SigV4 for {settings.url} needs AWS credentials: expected them from the AWS chain "
                "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws, or an instance role), "
                "found none; configure one of them"
            )
        self.url = settings.url
        self.region = str(region)
        self.service = service
        self._credentials = credentials

    @property
    def describe(self) -> str:
        """What is signed for, for messages: ``service es (Amazon OpenSearch Service ...) in eu-west-1``."""
        return f"service {self.service} ({SIGV4_SERVICES[self.service]}) in region {self.region}"

    @property
    def access_key(self) -> str:
        """The access key id (not a secret: AWS shows it in its own error messages)."""
        return str(self._credentials.get_frozen_credentials().access_key)

    def headers(self, method: str, url: str, body: bytes | str | None) -> dict[str, str]:
        """The headers that sign ``method url`` with ``body`` (sent as they are, beside the request's own)."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        data = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        request = AWSRequest(method=method.upper(), url=url, data=data)
        auth = SigV4Auth(self._credentials.get_frozen_credentials(), self.service, self.region)
        request.headers["x-amz-content-sha256"] = auth.payload(request)
        auth.add_auth(request)
        return {k: str(v) for k, v in request.headers.items() if k.lower() != "host"}

    def __call__(self, method: str, url: str, body: Any) -> Mapping[str, str]:
        """The form opensearch-py's urllib3 connection calls (``http_auth``)."""
        return self.headers(method, url, body)
