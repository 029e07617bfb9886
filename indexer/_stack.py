"""Connection files written by the local stacks, read when the user gives no credentials.

Two things start a secured Elasticsearch for the user and make its password themselves:

* ``docker compose up``: the compose ``setup`` service writes ``docker/credentials/stack.env``
  beside ``docker-compose.yml`` (git-ignored);
* ``harness engine start --docker``: writes ``<state>/nodes/<name>/connection.env``.

Both hold ``ES_URL``, ``ES_USERNAME`` and ``ES_PASSWORD`` in ``.env`` syntax (read with
python-dotenv). :meth:`ConnectionSettings.resolve` consults them last, below flags, environment
variables and the TOML config: with no URL given, the first file found gives the URL; a file gives
its credentials only for the URL it names, and only when none were given. ``R2MED_STACK_ENV`` names
one file to use instead of searching, or, set to ``none``, turns the search off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from base import ConfigError, default_state_dir, from_env, variable

#: where the compose setup service writes, relative to the folder of docker-compose.yml
COMPOSE_STACK_ENV = Path("docker") / "credentials" / "stack.env"
COMPOSE_FILES = ("docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml")
#: where ``harness engine start --docker`` writes, relative to the node's folder
NODE_CONNECTION_ENV = "connection.env"
ENV_OVERRIDE = variable("stack.file")


@dataclass(frozen=True, slots=True)
class StackConnection:
    """What one connection file says (the password stays a plain string only until it is wrapped)."""

    path: Path
    url: str
    username: str
    password: str

    def matches(self, url: str) -> bool:
        return self.url.rstrip("/") == url.rstrip("/")


def compose_stack_env(start: Path) -> Path | None:
    """``docker/credentials/stack.env`` of the nearest folder at or above ``start`` with a compose file."""
    for folder in (start, *start.parents):
        if any((folder / name).is_file() for name in COMPOSE_FILES):
            candidate = folder / COMPOSE_STACK_ENV
            return candidate if candidate.is_file() else None
    return None


def stack_env_files(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[Path]:
    """The connection files to consult, in order: the compose project's, then the Docker nodes'."""
    override = from_env("stack", env).get("file")
    if override is not None:
        if override.strip().lower() in {"none", "off", "0"}:
            return []
        path = Path(override).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"{ENV_OVERRIDE}={override}: expected a connection file (ES_URL=...), found none"
            )
        return [path]
    found: list[Path] = []
    compose = compose_stack_env(cwd or Path.cwd())
    if compose is not None:
        found.append(compose)
    nodes = default_state_dir(env) / "nodes"
    if nodes.is_dir():
        found += sorted(p for p in nodes.glob(f"*/{NODE_CONNECTION_ENV}") if p.is_file())
    return found


def read_stack_env(path: Path) -> StackConnection:
    """Parse one connection file; errors name the file and what is missing."""
    from dotenv import dotenv_values

    try:
        with path.open(encoding="utf-8") as fh:
            values = dotenv_values(stream=fh)
    except PermissionError:
        raise ConfigError(
            f"cannot read {path} (permission denied): it holds the stack's credentials; run as its owner, "
            "or give ES_URL, ES_USERNAME and ES_PASSWORD"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    missing = [key for key in ("ES_URL", "ES_USERNAME", "ES_PASSWORD") if not values.get(key)]
    if missing:
        raise ConfigError(
            f"{path}: expected ES_URL, ES_USERNAME and ES_PASSWORD, found no {', '.join(missing)}"
        )
    return StackConnection(
        path=path,
        url=str(values["ES_URL"]),
        username=str(values["ES_USERNAME"]),
        password=str(values["ES_PASSWORD"]),
    )


def stack_connection(files: list[Path], url: str | None) -> StackConnection | None:
    """The first file that names ``url`` (any file when ``url`` is None), or None."""
    for path in files:
        found = read_stack_env(path)
        if url is None or found.matches(url):
            return found
    return None


def stack_login() -> StackConnection | None:
    """The user and password of the local stack (the compose project's file first), for tools beside the
    engine that log in as the same user (Kibana); None when no connection file is found."""
    return stack_connection(stack_env_files(), None)
