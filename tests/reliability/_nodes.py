"""Managed nodes for the reliability tests: free ports and the secured node record (the nodes themselves are
made through ``managed_nodes``: tests/_nodes.py)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import Secret
from indexer import ConnectionSettings, ManagedNode
from tests._support import raw_es_client

HEAP = "512m"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class SecuredNode:
    url: str
    ca_cert: Path
    username: str
    password: Secret
    node: ManagedNode
    start_s: float

    @property
    def node_dir(self) -> Path:
        return self.node.config.node_dir

    def settings(self, **overrides: object) -> ConnectionSettings:
        kwargs: dict[str, object] = {
            "url": self.url,
            "username": self.username,
            "password": self.password,
            "ca_cert": self.ca_cert,
        }
        kwargs.update(overrides)
        return ConnectionSettings(**kwargs)  # type: ignore[arg-type]

    def client(self) -> Any:
        """An elasticsearch-py client with these credentials (tests inspect the node behind the product's back)."""
        return raw_es_client(self.settings())
