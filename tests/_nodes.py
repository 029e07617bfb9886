"""The managed nodes that tests start beyond the session's two engines (``managed_nodes``, tests/conftest.py).

Fault, security and multi-node tests, the legacy and k-NN-less OpenSearch clusters and the engine
lifecycle tests each start nodes of their own. They make them here: the fixture that hands this out
marks the test ``engine`` (so the fast loop leaves it out), and every node made here is stopped when the
session ends, whatever the test or fixture that owns it did (each still stops its own as soon as it is
done: these nodes cost ~0.5-1 GiB each).
"""

from __future__ import annotations

import contextlib
import shutil

from indexer import EngineConfig, ManagedNode
from indexer.node.flavours import EngineFlavour


class ManagedNodes:
    """A session's extra managed nodes: made through :meth:`node`, all stopped by :meth:`stop_all`."""

    def __init__(self) -> None:
        self._made: list[ManagedNode] = []

    def node(
        self, config: EngineConfig, flavour: EngineFlavour | None = None, *, fresh: bool = False
    ) -> ManagedNode:
        """A node for ``config`` (not started). ``fresh``: a node left by an earlier session under the same
        name is stopped and its folder wiped first, so the test starts from an empty node."""
        node = ManagedNode(config, flavour)
        if fresh:
            node.stop()
            shutil.rmtree(node.config.node_dir, ignore_errors=True)
        self._made.append(node)
        return node

    def stop_all(self) -> None:
        """Stop every node made here that still runs (the newest first)."""
        for node in reversed(self._made):
            with contextlib.suppress(Exception):
                node.stop()
