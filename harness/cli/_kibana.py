"""``harness kibana import``: load our saved objects (data view, searches, dashboard) into Kibana."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from base import from_env
from harness.cli._options import Deprecated, with_deprecated
from harness.inspect import KibanaAuth, import_saved_objects, saved_object_files
from harness.inspect._kibana import SAVED_OBJECTS_DIR
from indexer import stack_login

_SHOWN_DIR = f"{SAVED_OBJECTS_DIR.parent.name}/{SAVED_OBJECTS_DIR.name}"


@with_deprecated(
    Deprecated("--user", "username"), Deprecated("--dir", "saved_objects", new="--saved-objects", kind=Path)
)
def import_command(
    url: Annotated[
        str, typer.Option("--url", help="Kibana URL, e.g. http://127.0.0.1:5601 (env KIBANA_URL).")
    ] = "",
    username: Annotated[
        str | None, typer.Option("--username", help="Basic-auth user (env KIBANA_USERNAME).")
    ] = None,
    password: Annotated[
        str | None,
        typer.Option("--password", help="Basic-auth password (env KIBANA_PASSWORD).", show_default=False),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", help="Encoded API key (env KIBANA_API_KEY).", show_default=False),
    ] = None,
    ca_cert: Annotated[Path | None, typer.Option("--ca-cert", help="PEM CA certificate to trust.")] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="Do not verify TLS certificates.")] = False,
    saved_objects: Annotated[
        Path | None,
        typer.Option(
            "--saved-objects", help=f"Folder of *.ndjson saved objects to import (default {_SHOWN_DIR})."
        ),
    ] = None,
) -> None:
    """Import docker/kibana/*.ndjson into Kibana (overwriting earlier imports of the same objects)."""
    env = from_env("kibana")
    user, password, api_key = (
        username or env.get("username"),
        password or env.get("password"),
        api_key or env.get("api_key"),
    )
    if (
        not (user or api_key) and (stack := stack_login()) is not None
    ):  # `docker compose up` made the password
        user, password = stack.username, stack.password
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            f"kibana: logging in as {user} (from {stack.path})"
        )
    auth = KibanaAuth(username=user, password=password, api_key=api_key, ca_cert=ca_cert, verify=not insecure)
    target = url or env.get("url", "http://127.0.0.1:5601")
    files = saved_object_files(saved_objects or SAVED_OBJECTS_DIR)
    for result in import_saved_objects(target, files, auth):
        Console(highlight=False).print(f"imported {result.success_count} object(s) from {result.file.name}")


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="kibana", help="Kibana saved objects for the evaluation records.", no_args_is_help=True
    )
    group.command("import")(import_command)
    app.add_typer(group, name="kibana")
