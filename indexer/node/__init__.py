"""The node the harness runs for the user: a local process from a distribution, or a Docker container.

One module per concern (after Rally's mechanic): :mod:`~indexer.node._java` finds a Java that fits the
engine, :mod:`~indexer.node._distribution` finds, unpacks and equips the distribution (plugins),
:mod:`~indexer.node._process` launches, probes and stops processes (and picks the OS user as root),
:mod:`~indexer.node._node_dir` writes the node's folder and config file, :mod:`~indexer.node._managed`
is the :class:`ManagedNode` built from those, :mod:`~indexer.node._docker` the :class:`DockerNode`;
:mod:`indexer.node.flavours` holds what differs between Elasticsearch and OpenSearch, one module each.
"""

from base import DistributionNotFoundError, EngineError, JavaNotFoundError, NodeDiedError, PortInUseError
from indexer.node._config import EngineConfig, NodeStatus, choose_node, recorded_engine
from indexer.node._distribution import find_distribution, find_plugin, unpack_distribution
from indexer.node._docker import DEFAULT_DOCKER_IMAGE, DockerEngineConfig, DockerNode, docker_client
from indexer.node._java import JavaRuntime, find_java
from indexer.node._managed import ManagedNode
from indexer.node._open import open_node

__all__ = [
    "DEFAULT_DOCKER_IMAGE",
    "DistributionNotFoundError",
    "DockerEngineConfig",
    "DockerNode",
    "EngineConfig",
    "EngineError",
    "JavaNotFoundError",
    "JavaRuntime",
    "ManagedNode",
    "NodeDiedError",
    "NodeStatus",
    "PortInUseError",
    "choose_node",
    "docker_client",
    "find_distribution",
    "find_java",
    "find_plugin",
    "open_node",
    "recorded_engine",
    "unpack_distribution",
]
