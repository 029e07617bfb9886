"""Connection settings shared by every command (the backend built from them: :func:`indexer.connect`).

One table of keys, read the same way from every source (highest first): the command line
(``--url``, ``--set connection.KEY=VALUE``), the environment (``ES_URL``, ``ES_AUTH``,
``AWS_REGION`` ...: :data:`base.ENV_VARS`), an optional TOML config file (``--config`` or
``$R2MED_HARNESS_CONFIG``, table ``[connection]``) and the connection file of a local stack
(``docker compose up`` or ``harness engine start --docker``, see :mod:`indexer._stack`): it gives the
URL when none was given, and its credentials when none were given and the URL is its own.

The keys: ``url`` (or ``cloud_id``, Elastic Cloud's, which names the URL), ``auth`` (``basic``,
``api-key`` or ``sigv4``; by default the kind the credentials given imply), ``username``/``password``,
``api_key``, ``region``/``service`` (SigV4: AWS credentials come from the standard AWS chain, never
from here), ``ca_cert``/``verify`` (TLS) and ``request_timeout``.

Secrets are held in :class:`Secret`, whose ``repr`` and ``str`` never show the value;
:meth:`ConnectionSettings.redacted` is the only form that goes into logs, manifests and reports
(it names the auth kind, never a secret).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from base import ConfigError, Secret, from_env
from indexer._cloud_id import parse_cloud_id
from indexer._stack import StackConnection, stack_connection, stack_env_files

DEFAULT_URL = "http://127.0.0.1:9200"
#: the kinds of authentication (``connection.auth``); none of them: no credentials at all
AUTH_KINDS: tuple[str, ...] = ("basic", "api-key", "sigv4")
NO_AUTH = "none"
#: SigV4 services (``connection.service``) and what each signs for
SIGV4_SERVICES: dict[str, str] = {
    "es": "Amazon OpenSearch Service (a domain)",
    "aoss": "Amazon OpenSearch Serverless (a collection)",
}
DEFAULT_SIGV4_SERVICE = "es"
#: old names of keys, still read (config files written before the rename)
ALIASES: dict[str, str] = {"verify_certs": "verify"}
_SECRETS = frozenset({"password", "api_key"})
_CREDENTIALS = frozenset({"username", "password", "api_key"})


def _truthy(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"expected a boolean (true/false/1/0) for certificate verification, found {value!r}")


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    url: str = DEFAULT_URL
    username: str | None = None
    password: Secret | None = None
    api_key: Secret | None = None
    ca_cert: Path | None = None
    verify: bool = True
    request_timeout: float = 60.0
    #: Elastic Cloud's Cloud ID: it names the URL (given both, they must agree)
    cloud_id: str | None = None
    #: basic | api-key | sigv4; None: the kind the credentials given imply (:attr:`auth_kind`)
    auth: str | None = None
    #: SigV4: the AWS region (None: the AWS configuration's, else an error when signing)
    region: str | None = None
    #: SigV4: the service signed for, ``es`` (a domain) or ``aoss`` (Serverless); None: ``es``
    service: str | None = None
    #: the stack connection file the URL and credentials came from (None: flags, environment, config)
    credentials_from: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.cloud_id is not None:
            cloud_url = parse_cloud_id(self.cloud_id).url
            if self.url not in (DEFAULT_URL, cloud_url):
                raise ConfigError(
                    f"connection.cloud_id names {cloud_url} and connection.url names {self.url}: "
                    "expected one of them, found both (drop one)"
                )
            object.__setattr__(self, "url", cloud_url)
        parts = urlsplit(self.url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ConfigError(
                f"expected an Elasticsearch or OpenSearch URL like http://host:9200, found {self.url!r}"
            )
        if parts.username or parts.password:
            raise ConfigError(
                "credentials inside the URL are not accepted (they would be printed); "
                "use --username/--password, --api-key or ES_USERNAME/ES_PASSWORD/ES_API_KEY"
            )
        if self.password is not None and self.username is None:
            raise ConfigError("a password was given without a username (--username or ES_USERNAME)")
        if self.api_key is not None and (self.username or self.password):
            raise ConfigError("give either basic auth (username/password) or an API key, not both")
        self._check_auth()
        if self.ca_cert is not None and not self.ca_cert.is_file():
            raise ConfigError(f"CA certificate file not found: expected a PEM file at {self.ca_cert}")
        if self.request_timeout <= 0:
            raise ConfigError(f"expected a positive request timeout, found {self.request_timeout}")

    def _check_auth(self) -> None:
        if self.auth is not None and self.auth not in AUTH_KINDS:
            raise ConfigError(
                f"connection.auth: expected one of {', '.join(AUTH_KINDS)}, found {self.auth!r}"
            )
        if self.service is not None and self.service not in SIGV4_SERVICES:
            raise ConfigError(
                f"connection.service: expected one of {', '.join(SIGV4_SERVICES)} (the SigV4 service), "
                f"found {self.service!r}"
            )
        if self.auth == "basic" and self.username is None:
            raise ConfigError(
                "connection.auth=basic: expected a user (connection.username or ES_USERNAME), found none"
            )
        if self.auth == "api-key" and self.api_key is None:
            raise ConfigError(
                "connection.auth=api-key: expected an API key (connection.api_key or ES_API_KEY), found none"
            )
        if self.auth == "sigv4" and (self.username or self.api_key):
            raise ConfigError(
                "connection.auth=sigv4 signs every request with AWS credentials from the AWS chain: expected no "
                "username, password or API key, found one (unset ES_USERNAME/ES_PASSWORD/ES_API_KEY)"
            )
        if self.service is not None and self.auth != "sigv4":
            raise ConfigError(
                f"connection.service={self.service} names a SigV4 service: expected connection.auth=sigv4, "
                f"found auth {self.auth_kind}"
            )

    @property
    def auth_kind(self) -> str:
        """How requests authenticate: ``basic``, ``api-key``, ``sigv4`` or ``none``."""
        if self.auth is not None:
            return self.auth
        if self.api_key is not None:
            return "api-key"
        return "basic" if self.username is not None else NO_AUTH

    @property
    def sigv4_service(self) -> str | None:
        """The SigV4 service signed for (``es`` unless told), None without SigV4."""
        return (self.service or DEFAULT_SIGV4_SERVICE) if self.auth == "sigv4" else None

    @property
    def verify_certs(self) -> bool:
        """The old name of :attr:`verify`."""
        return self.verify

    @classmethod
    def resolve(
        cls,
        flags: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        config_file: Path | None = None,
        stack_files: Sequence[Path] | None = None,
    ) -> ConnectionSettings:
        """Merge flags > environment > config file > stack connection file > defaults, once, at the CLI edge.

        ``stack_files``: the connection files to consult (None: :func:`stack_env_files` finds them).
        """
        merged: dict[str, Any] = {}
        cfg_file = from_env("config", env).get("file")
        cfg_path = config_file or (Path(cfg_file) if cfg_file else None)
        if cfg_path is not None:
            merged.update(_aliased(_read_config(cfg_path)))
        merged.update(_aliased(from_env("connection", env)))
        for name, value in _aliased(flags or {}).items():
            if value is not None:
                merged[name] = value
        origin = None
        if "cloud_id" not in merged and str(merged.get("auth", "")).lower() != "sigv4":
            stack = _stack_for(merged.get("url"), env, stack_files)
            if stack is not None:
                merged.setdefault("url", stack.url)
                if not _CREDENTIALS & merged.keys():
                    merged.update(username=stack.username, password=Secret(stack.password))
                    origin = stack.path
        known = {f.name for f in fields(cls)} - {"credentials_from"}
        unknown = set(merged) - known
        if unknown:
            raise ConfigError(
                f"unknown connection settings {sorted(unknown)}; expected some of {sorted(known)}"
            )
        return cls(credentials_from=origin, **{name: _typed(name, value) for name, value in merged.items()})

    def with_url(self, url: str) -> ConnectionSettings:
        """The same credentials and TLS settings for another cluster."""
        return replace(self, url=url, cloud_id=None)

    def redacted(self) -> dict[str, Any]:
        """What may be shown or stored: no secret ever appears here."""
        shown: dict[str, Any] = {
            "url": self.url,
            "username": self.username,
            "auth": self.auth_kind,
            "ca_cert": str(self.ca_cert) if self.ca_cert else None,
            "verify_certs": self.verify,
        }
        if self.cloud_id is not None:
            shown["cloud_id"] = parse_cloud_id(self.cloud_id).name
        if self.sigv4_service is not None:
            shown.update(region=self.region, service=self.sigv4_service)
        if self.credentials_from is not None:
            shown["credentials_from"] = str(self.credentials_from)
        return shown


def _aliased(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with old key names read as their new ones (the new name wins when both are given)."""
    out = {ALIASES.get(k, k): v for k, v in values.items() if k in ALIASES}
    out.update({k: v for k, v in values.items() if k not in ALIASES})
    return out


def _typed(name: str, value: Any) -> Any:
    """One setting as the dataclass holds it (secrets wrapped, paths, booleans, numbers)."""
    if name in _SECRETS:
        return value if isinstance(value, Secret) else Secret(str(value))
    if name == "ca_cert":
        return Path(value).expanduser()
    if name == "verify":
        return value if isinstance(value, bool) else _truthy(str(value))
    if name == "request_timeout":
        try:
            return float(value)
        except ValueError as exc:
            raise ConfigError(f"expected a number of seconds for request timeout, found {value!r}") from exc
    if name in {"auth", "service"}:
        return str(value).strip().lower()
    return str(value)


def _stack_for(
    url: Any, env: Mapping[str, str] | None, stack_files: Sequence[Path] | None
) -> StackConnection | None:
    """The first stack connection file that names ``url`` (or any, when no URL was given)."""
    files = list(stack_env_files(env) if stack_files is None else stack_files)
    return stack_connection(files, None if url is None else str(url))


def _read_config(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    section = data.get("connection", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: expected a [connection] table, found {type(section).__name__}")
    return dict(section)
