"""Connection settings shared by every command (the backend built from them: :func:`indexer.connect`).

Settings come from (highest first) CLI flags, environment variables, an
optional TOML config file (``--config`` or ``$R2MED_HARNESS_CONFIG``, table
``[connection]``) and the connection file of a local stack (``docker
compose up`` or ``harness engine start --docker``, see :mod:`indexer._stack`):
it gives the URL when none was given, and its credentials when none were
given and the URL is its own.  Secrets are held in :class:`Secret`, whose ``repr`` and
``str`` never show the value; :meth:`ConnectionSettings.redacted` is the only
form that goes into logs, manifests and reports.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from base import ConfigError, Secret, from_env
from indexer._stack import StackConnection, stack_connection, stack_env_files

DEFAULT_URL = "http://127.0.0.1:9200"


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
    verify_certs: bool = True
    request_timeout: float = 60.0
    #: the stack connection file the URL and credentials came from (None: flags, environment, config)
    credentials_from: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
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
        if self.ca_cert is not None and not self.ca_cert.is_file():
            raise ConfigError(f"CA certificate file not found: expected a PEM file at {self.ca_cert}")
        if self.request_timeout <= 0:
            raise ConfigError(f"expected a positive request timeout, found {self.request_timeout}")

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
            merged.update(_read_config(cfg_path))
        merged.update(from_env("connection", env))
        for name, value in (flags or {}).items():
            if value is not None:
                merged[name] = value
        origin = None
        stack = _stack_for(merged.get("url"), env, stack_files)
        if stack is not None:
            merged.setdefault("url", stack.url)
            if not {"username", "password", "api_key"} & merged.keys():
                merged.update(username=stack.username, password=Secret(stack.password))
                origin = stack.path
        known = {f.name for f in fields(cls)} - {"credentials_from"}
        unknown = set(merged) - known
        if unknown:
            raise ConfigError(
                f"unknown connection settings {sorted(unknown)}; expected some of {sorted(known)}"
            )
        kwargs: dict[str, Any] = {"credentials_from": origin}
        for name, value in merged.items():
            if name in {"password", "api_key"}:
                kwargs[name] = value if isinstance(value, Secret) else Secret(str(value))
            elif name == "ca_cert":
                kwargs[name] = Path(value).expanduser()
            elif name == "verify_certs":
                kwargs[name] = value if isinstance(value, bool) else _truthy(str(value))
            elif name == "request_timeout":
                try:
                    kwargs[name] = float(value)
                except ValueError as exc:
                    raise ConfigError(
                        f"expected a number of seconds for request timeout, found {value!r}"
                    ) from exc
            else:
                kwargs[name] = str(value)
        return cls(**kwargs)

    def with_url(self, url: str) -> ConnectionSettings:
        """The same credentials and TLS settings for another cluster."""
        return replace(self, url=url)

    def redacted(self) -> dict[str, Any]:
        """What may be shown or stored: no secret ever appears here."""
        shown: dict[str, Any] = {
            "url": self.url,
            "username": self.username,
            "auth": "api_key" if self.api_key else ("basic" if self.password else "none"),
            "ca_cert": str(self.ca_cert) if self.ca_cert else None,
            "verify_certs": self.verify_certs,
        }
        if self.credentials_from is not None:
            shown["credentials_from"] = str(self.credentials_from)
        return shown


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
