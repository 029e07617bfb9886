"""The node a name stands for: the managed process or the Docker container, whichever started last."""

from __future__ import annotations

import json
from typing import Any

from indexer.node._config import EngineConfig
from indexer.node._docker import DEFAULT_DOCKER_IMAGE, DockerEngineConfig, DockerNode
from indexer.node._managed import ManagedNode


def open_node(config: EngineConfig, client: Any | None = None) -> ManagedNode | DockerNode:
    """The node last started under ``config.name``: the container when its record is the newer one."""
    record = config.node_dir / "docker.json"
    if not record.is_file():
        return ManagedNode(config)
    managed = [config.node_dir / "node.json", config.node_dir / "logs" / "console.log"]
    managed_at = max((p.stat().st_mtime for p in managed if p.is_file()), default=0.0)
    if managed_at > record.stat().st_mtime:
        return ManagedNode(config)
    try:
        state = json.loads(record.read_text())
    except (OSError, ValueError):
        state = {}
    docker_config = DockerEngineConfig(
        state_dir=config.state_dir,
        name=config.name,
        http_port=int(state.get("http_port", config.http_port)),
        image=str(state.get("image", DEFAULT_DOCKER_IMAGE)),
    )
    return DockerNode(docker_config, client)
