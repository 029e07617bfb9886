"""Options shared by every command: connection settings, built once into typed config."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from indexer import ConnectionSettings

console = Console(soft_wrap=True)  # long lines are not broken in logs

UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="Elasticsearch or OpenSearch URL, the engine asked, not named (env ES_URL; default http://127.0.0.1:9200).",
    ),
]
UserOpt = Annotated[str | None, typer.Option("--username", help="Basic-auth user (env ES_USERNAME).")]
PasswordOpt = Annotated[
    str | None,
    typer.Option(
        "--password", help="Basic-auth password (env ES_PASSWORD; prefer the env var).", show_default=False
    ),
]
ApiKeyOpt = Annotated[
    str | None, typer.Option("--api-key", help="Encoded API key (env ES_API_KEY).", show_default=False)
]
CaCertOpt = Annotated[
    Path | None, typer.Option("--ca-cert", help="PEM CA certificate to trust (env ES_CA_CERT).")
]
InsecureOpt = Annotated[
    bool, typer.Option("--insecure", help="Do not verify TLS certificates (env ES_VERIFY_CERTS=false).")
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="TOML file with a 'connection' table (env R2MED_HARNESS_CONFIG)."),
]


def connection_settings(
    url: str | None = None,
    username: str | None = None,
    password: str | None = None,
    api_key: str | None = None,
    ca_cert: Path | None = None,
    insecure: bool = False,
    config: Path | None = None,
) -> ConnectionSettings:
    flags = {
        "url": url,
        "username": username,
        "password": password,
        "api_key": api_key,
        "ca_cert": ca_cert,
        "verify": False if insecure else None,
    }
    return ConnectionSettings.resolve(flags, config_file=config)


#: the connection options every command that talks to a cluster takes: (name, annotation, default)
CONNECTION_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("url", UrlOpt, None),
    ("username", UserOpt, None),
    ("password", PasswordOpt, None),
    ("api_key", ApiKeyOpt, None),
    ("ca_cert", CaCertOpt, None),
    ("insecure", InsecureOpt, False),
    ("config", ConfigOpt, None),
)

#: their parameter names (a command's help puts them in its "Cluster" panel)
CONNECTION_NAMES: tuple[str, ...] = tuple(name for name, _, _ in CONNECTION_OPTIONS)

F = TypeVar("F", bound=Callable[..., Any])


def with_connection(func: F) -> F:
    """Give a command the shared connection options; it receives them built once as ``conn``.

    The command declares ``conn: ConnectionSettings`` as its last parameter; the CLI shows the
    connection options in its place.
    """
    signature = inspect.signature(func, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "conn"]
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in CONNECTION_OPTIONS
    ]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, default) for name, _, default in CONNECTION_OPTIONS}
        return func(*args, conn=connection_settings(**values), **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[*own, *extra])  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
