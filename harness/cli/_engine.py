"""`harness engine start|status|stop|logs`: a locally managed Elasticsearch or OpenSearch node."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from base import ConfigError, default_cache_dir, default_state_dir, from_env
from harness.cli._common import console
from harness.cli._options import default_of
from indexer import (
    DEFAULT_DOCKER_IMAGE,
    DockerEngineConfig,
    DockerNode,
    EngineConfig,
    ManagedNode,
    choose_node,
    connect,
    open_node,
)

engine_app = typer.Typer(
    help="Run a local Elasticsearch or OpenSearch node for the harness (no Docker needed).",
    no_args_is_help=True,
)

_PORT = default_of(EngineConfig, "http_port")
_HEAP = default_of(EngineConfig, "heap")
_ENGINE = default_of(EngineConfig, "engine")

NameOpt = Annotated[
    str | None,
    typer.Option("--name", help="Node name; each name has its own data folder (default: per engine)."),
]
EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help=f"elasticsearch or opensearch (default {_ENGINE}; for an existing --name, the engine it runs).",
    ),
]


def _port(text: str | None) -> int:
    if text is None:
        return int(_PORT)
    if not text.isdigit() or not 1024 <= int(text) <= 65535:
        raise ConfigError(f"expected R2MED_ENGINE_PORT to be a port between 1024 and 65535, found {text!r}")
    return int(text)


def engine_config(
    port: int | None = None,
    name: str | None = None,
    heap: str | None = None,
    distribution: Path | None = None,
    java_home: Path | None = None,
    engine: str | None = None,
) -> EngineConfig:
    env = from_env("engine")
    state_dir = default_state_dir()
    engine_name, node_name = choose_node(state_dir, engine=engine, name=name)
    return EngineConfig(
        state_dir=state_dir,
        cache_dir=default_cache_dir(),
        distribution=distribution,
        java_home=java_home,
        name=node_name,
        http_port=port or _port(env.get("port")),
        heap=heap or env.get("heap", _HEAP),
        engine=engine_name,
    )


def start(
    port: Annotated[
        int | None,
        typer.Option(
            "--port", min=1024, max=65535, help=f"HTTP port (env R2MED_ENGINE_PORT, default {_PORT})."
        ),
    ] = None,
    heap: Annotated[
        str | None, typer.Option("--heap", help=f"JVM heap (env R2MED_ENGINE_HEAP, default {_HEAP}).")
    ] = None,
    distribution: Annotated[
        Path | None,
        typer.Option(
            "--distribution",
            help="Archive or folder of the engine (env R2MED_ES_DISTRIBUTION / R2MED_OS_DISTRIBUTION).",
        ),
    ] = None,
    java_home: Annotated[
        Path | None,
        typer.Option(
            "--java-home", help="JDK 21+ home (else ES_JAVA_HOME / OPENSEARCH_JAVA_HOME, JAVA_HOME, ...)."
        ),
    ] = None,
    name: NameOpt = None,
    engine: EngineOpt = None,
    docker: Annotated[
        bool, typer.Option("--docker", help="Run Elasticsearch in a Docker container (security on).")
    ] = False,
    image: Annotated[
        str | None,
        typer.Option(
            "--image", help=f"Image for --docker (env R2MED_ES_IMAGE; default {DEFAULT_DOCKER_IMAGE})."
        ),
    ] = None,
) -> None:
    """Start a local node and wait until it is healthy."""
    cfg = engine_config(port, name, heap, distribution, java_home, engine)
    node: ManagedNode | DockerNode = ManagedNode(cfg)
    if docker:
        image = image or from_env("engine").get("image") or DEFAULT_DOCKER_IMAGE
        node = DockerNode(DockerEngineConfig(cfg.state_dir, cfg.name, cfg.http_port, image, cfg.heap))
    display = node.flavour.display if isinstance(node, ManagedNode) else "Elasticsearch"
    with console.status(f"starting {display} (waiting for cluster health)…"):
        status, started = node.start()
    where = f"container {status.container}" if status.container else f"pid {status.pid}"
    if started:
        console.print(f"{display} started: {status.url} ({where})")
    else:
        console.print(f"{display} is already running: {status.url} ({where}); not starting another")
    for note in _notes(node):
        console.print(f"  note: {note}", highlight=False)
    conn = node.connection()
    if conn.credentials_from is not None:
        console.print(f"  user elastic; harness commands read the password from {conn.credentials_from}")
    else:
        console.print(f"  export ES_URL={status.url}", highlight=False)


def _label(node: ManagedNode | DockerNode) -> str:
    if isinstance(node, DockerNode):
        return f"docker node {node.config.name!r}"
    return f"managed {node.flavour.display} node {node.config.name!r}"


def _notes(node: ManagedNode | DockerNode) -> tuple[str, ...]:
    return tuple(node.flavour.notes) if isinstance(node, ManagedNode) else ()


def status(
    port: Annotated[
        int | None, typer.Option("--port", min=1024, max=65535, help="HTTP port of the managed node.")
    ] = None,
    name: NameOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Print whether the managed node runs, its version, health and capabilities."""
    node = open_node(engine_config(port, name, engine=engine))
    label = _label(node)
    st = node.status()
    if not st.running:
        console.print(f"{label}: not running ({st.detail})")
        raise typer.Exit(3)
    backend = connect(node.connection(), wait_for_status=None)
    try:
        health = backend.health()
        caps = backend.probe()
    finally:
        backend.close()
    console.print(f"{label}: running at {st.url} ({st.detail if st.container else f'pid {st.pid}'})")
    console.print(
        f"  version {caps.version} ({caps.flavour}, {caps.build_flavour}), health {health.status}, license {caps.license}"
    )
    console.print(f"  analyzers: {', '.join(k for k, v in caps.analyzers.items() if v) or 'none'}")
    console.print(f"  retrievers: rrf={caps.retrievers['rrf']} linear={caps.retrievers['linear']}")
    console.print(f"  features: {', '.join(f'{k}={v}' for k, v in caps.features.items())}")
    console.print(f"  vector index types: {', '.join(caps.vector_index_types) or 'none'}")
    console.print(f"  modules: {', '.join(caps.modules)}")
    for note in (*caps.notes, *_notes(node)):
        console.print(f"  note: {note}", highlight=False)


def stop(
    port: Annotated[
        int | None, typer.Option("--port", min=1024, max=65535, help="HTTP port of the managed node.")
    ] = None,
    name: NameOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Stop the node this harness started (never any other process or container)."""
    node = open_node(engine_config(port, name, engine=engine))
    label = _label(node)
    console.print(f"{label} stopped" if node.stop() else f"{label} was not running")


def logs(
    lines: Annotated[int, typer.Option("-n", "--lines", min=1, help="How many lines from the end.")] = 40,
    name: NameOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Print the tail of the managed node's logs."""
    node = open_node(engine_config(None, name, engine=engine))
    text = node.logs(lines)
    console.print(text or f"no logs yet for node {node.config.name!r}", highlight=False, markup=False)


engine_app.command()(start)
engine_app.command()(status)
engine_app.command()(stop)
engine_app.command()(logs)


def register(app: typer.Typer) -> None:
    app.add_typer(engine_app, name="engine")
