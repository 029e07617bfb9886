"""`harness engine start|status|stop|logs`: a locally managed Elasticsearch or OpenSearch node."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli._common import console
from indexer import (
    ConfigError,
    ConnectionSettings,
    EngineConfig,
    ManagedNode,
    choose_node,
    default_cache_dir,
    default_state_dir,
    from_env,
    open_backend,
)

engine_app = typer.Typer(
    help="Run a local Elasticsearch or OpenSearch node for the harness (no Docker needed).",
    no_args_is_help=True,
)

NameOpt = Annotated[
    str | None,
    typer.Option("--name", help="Node name; each name has its own data folder (default: per engine)."),
]
EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="elasticsearch or opensearch (default elasticsearch; for an existing --name, the engine it runs).",
    ),
]


def _port(text: str | None) -> int:
    if text is None:
        return 9200
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
        heap=heap or env.get("heap", "1g"),
        engine=engine_name,
    )


def start(
    port: Annotated[
        int | None,
        typer.Option("--port", min=1024, max=65535, help="HTTP port (env R2MED_ENGINE_PORT, default 9200)."),
    ] = None,
    heap: Annotated[
        str | None, typer.Option("--heap", help="JVM heap, e.g. 1g (env R2MED_ENGINE_HEAP).")
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
) -> None:
    """Start a local node and wait until it is healthy."""
    node = ManagedNode(engine_config(port, name, heap, distribution, java_home, engine))
    display = node.flavour.display
    with console.status(f"starting {display} (waiting for cluster health)…"):
        status, started = node.start()
    if started:
        console.print(f"{display} started: {status.url} (pid {status.pid})")
    else:
        console.print(f"{display} is already running: {status.url} (pid {status.pid}); not starting another")
    for note in node.flavour.notes:
        console.print(f"  note: {note}", highlight=False)
    console.print(f"  export ES_URL={status.url}", highlight=False)


def status(
    port: Annotated[
        int | None, typer.Option("--port", min=1024, max=65535, help="HTTP port of the managed node.")
    ] = None,
    name: NameOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Print whether the managed node runs, its version, health and capabilities."""
    node = ManagedNode(engine_config(port, name, engine=engine))
    label = f"managed {node.flavour.display} node {node.config.name!r}"
    st = node.status()
    if not st.running:
        console.print(f"{label}: not running ({st.detail})")
        raise typer.Exit(3)
    backend = open_backend(ConnectionSettings(url=st.url), wait_for_status=None)
    try:
        health = backend.health()
        caps = backend.probe()
    finally:
        backend.close()
    console.print(f"{label}: running at {st.url} (pid {st.pid})")
    console.print(
        f"  version {caps.version} ({caps.flavour}, {caps.build_flavour}), health {health.status}, license {caps.license}"
    )
    console.print(f"  analyzers: {', '.join(k for k, v in caps.analyzers.items() if v) or 'none'}")
    console.print(f"  retrievers: rrf={caps.retrievers['rrf']} linear={caps.retrievers['linear']}")
    console.print(f"  features: {', '.join(f'{k}={v}' for k, v in caps.features.items())}")
    console.print(f"  vector index types: {', '.join(caps.vector_index_types) or 'none'}")
    console.print(f"  modules: {', '.join(caps.modules)}")
    for note in (*caps.notes, *node.flavour.notes):
        console.print(f"  note: {note}", highlight=False)


def stop(
    port: Annotated[int | None, typer.Option("--port", min=1024, max=65535)] = None,
    name: NameOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Stop the node this harness started (never any other process)."""
    node = ManagedNode(engine_config(port, name, engine=engine))
    label = f"managed {node.flavour.display} node {node.config.name!r}"
    console.print(f"{label} stopped" if node.stop() else f"{label} was not running")


def logs(
    lines: Annotated[int, typer.Option("-n", "--lines", min=1, help="How many lines from the end.")] = 40,
    name: NameOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Print the tail of the managed node's logs."""
    node = ManagedNode(engine_config(None, name, engine=engine))
    text = node.logs(lines)
    console.print(text or f"no logs yet under {node.config.node_dir / 'logs'}", highlight=False, markup=False)


engine_app.command()(start)
engine_app.command()(status)
engine_app.command()(stop)
engine_app.command()(logs)


def register(app: typer.Typer) -> None:
    app.add_typer(engine_app, name="engine")
