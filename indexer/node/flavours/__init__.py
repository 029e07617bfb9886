"""Managed-node flavours, one module each, chosen by name through :data:`ENGINES`."""

from __future__ import annotations

from base import ConfigError
from indexer.node.flavours import _elasticsearch, _opensearch
from indexer.node.flavours._base import EngineFlavour, MavenArtifact, PluginSpec
from indexer.node.flavours._versions import VERSIONS, distribution_flavour, engine_version

#: --engine name -> flavour; adding an engine is one module and one line here
ENGINES: dict[str, EngineFlavour] = {f.name: f for f in (_elasticsearch.FLAVOUR, _opensearch.FLAVOUR)}
DEFAULT_ENGINE = _elasticsearch.FLAVOUR.name


def get_engine(name: str) -> EngineFlavour:
    """The flavour registered as ``name``; a clear error for anything else."""
    try:
        return ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown engine {name!r}: expected one of {', '.join(sorted(ENGINES))}") from None


__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "VERSIONS",
    "EngineFlavour",
    "MavenArtifact",
    "PluginSpec",
    "distribution_flavour",
    "engine_version",
    "get_engine",
]
