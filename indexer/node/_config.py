"""Which node, and where its files are: the node's settings, what ``status`` reports, and the engine
a node's folder holds (a named node keeps running the engine whose data it has)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base import ConfigError
from indexer.node._process import DEFAULT_RUN_USER
from indexer.node.flavours import DEFAULT_ENGINE, get_engine

#: in a node's folder: the engine whose data it holds (kept across stops; node.json is not)
ENGINE_FILE = "engine"


@dataclass(frozen=True, slots=True)
class EngineConfig:
    state_dir: Path
    cache_dir: Path
    distribution: Path | None = None
    java_home: Path | None = None
    name: str = "default"
    http_port: int = 9200
    transport_port: int | None = None
    heap: str = "1g"
    run_user: str = DEFAULT_RUN_USER
    start_timeout_s: float = 180.0
    #: extra settings for the node's config file (multi-node discovery, thread pools, security ...)
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: files to place in the node's config folder (name -> bytes), e.g. certificates
    config_files: Mapping[str, bytes] = field(default_factory=dict)
    scheme: str = "http"
    #: which engine flavour (indexer.node.flavours.ENGINES) runs this node
    engine: str = DEFAULT_ENGINE
    #: the flavour's plugins to install (None: all of them; () none, e.g. OpenSearch without k-NN)
    plugins: tuple[str, ...] | None = None

    @property
    def node_dir(self) -> Path:
        return self.state_dir / "nodes" / self.name

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.http_port}"


@dataclass(frozen=True, slots=True)
class NodeStatus:
    running: bool
    url: str
    pid: int | None
    state_file: Path
    log_file: Path
    detail: str = ""
    engine: str = DEFAULT_ENGINE
    #: the container's short id, for a node that runs in Docker
    container: str | None = None


def recorded_engine(state_dir: Path, name: str) -> str | None:
    """The engine whose data the managed node folder ``name`` holds (None if it never started)."""
    node_dir = state_dir / "nodes" / name
    try:
        return (node_dir / ENGINE_FILE).read_text().strip() or None
    except OSError:
        pass
    # folders made before the engine file existed hold Elasticsearch data
    return DEFAULT_ENGINE if (node_dir / "config").is_dir() else None


def choose_node(state_dir: Path, *, engine: str | None = None, name: str | None = None) -> tuple[str, str]:
    """(engine, node name) for ``--engine``/``--name``: a named node runs the engine whose data its folder
    holds; an engine alone means that engine's default node; neither means Elasticsearch's."""
    if engine is not None:
        get_engine(engine)  # an unknown name fails here, clearly
    recorded = recorded_engine(state_dir, name) if name else None
    if engine and recorded and engine != recorded:
        held, asked = get_engine(recorded).display, get_engine(engine).display
        raise ConfigError(
            f"node {name!r} runs {held}, not {asked}: its data folder holds {held} data; choose another --name"
        )
    flavour = get_engine(engine or recorded or DEFAULT_ENGINE)
    return flavour.name, name or flavour.default_node_name
