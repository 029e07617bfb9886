"""What every command that talks to a cluster shares: the connection, one table of keys (``connection.*``).

Each such command reads ``connection.KEY`` from the connection file (``--set connection.config=FILE`` or
``R2MED_HARNESS_CONFIG``), the environment (``ES_URL``, ``ES_USERNAME``, ...) and ``--set connection.KEY=VALUE``
(or an experiment file's ``[connection]``) the same way; ``--url`` is the one flag. The six flags each command
had before (``--username``, ``--password``, ``--api-key``, ``--ca-cert``, ``--insecure``, ``--config``) are
hidden aliases for one release (:data:`CONNECTION_ALIASES`). A key added to the connection table needs nothing
here: every key of it reaches the connection settings by its name.
"""

from __future__ import annotations

import dataclasses

from rich.console import Console

from base import Endpoint
from harness.cli._options import Deprecated
from harness.cli._views import Flag
from harness.keys import FLAG, Origins

console = Console(soft_wrap=True)  # long lines are not broken in logs

#: the help panel of the connection
CONNECTION_PANEL = "Connection"
#: the one connection flag
URL = Flag("connection.url", ("--url",), panel=CONNECTION_PANEL)
#: the connection's tables and keys, as a command's view reads them
CONNECTION = ("connection",)
#: the connection flags every command took before the connection table (hidden; one release)
CONNECTION_ALIASES: tuple[Deprecated, ...] = (
    Deprecated("--username", set_key="connection.username"),
    Deprecated(
        "--password",
        set_key="connection.password",
        secret=True,
        new="ES_PASSWORD or --set connection.password=VALUE",
    ),
    Deprecated(
        "--api-key",
        set_key="connection.api_key",
        secret=True,
        new="ES_API_KEY or --set connection.api_key=VALUE",
    ),
    Deprecated("--ca-cert", set_key="connection.ca_cert"),
    Deprecated("--insecure", set_key="connection.verify", flag=True, value=False),
    Deprecated("--config", set_key="connection.config"),
)


def spelled(endpoint: Endpoint, origins: Origins, prefix: str) -> Endpoint:
    """The endpoint with its URL and key settings named as the user wrote them (``--llm-url`` on the command
    line, ``judgments.llm_url`` in a file): what its failures later say to fix."""

    def spell(name: str) -> str:
        key = f"{prefix}.{name}"
        given = origins.written.get(key)
        return origins.spell(key, given.kind if given is not None else FLAG)

    return dataclasses.replace(endpoint, url_flag=spell("llm_url"), key_flag=spell("llm_key_env"))
