"""What a managed-node flavour is: its distribution, its plugins, and how its scripts are driven.

A flavour is data, not code: :class:`~indexer.node.ManagedNode` reads it to find
the archive, unpack it, install plugins, pick a Java, write the node's config file
and start the node. Adding an engine flavour is one module and one registry line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base import ConfigError


@dataclass(frozen=True, slots=True)
class MavenArtifact:
    """One file on Maven Central, pinned by SHA-256 (Central publishes no checksum for some of them)."""

    group: str
    artifact: str
    version: str
    sha256: str
    packaging: str = "zip"

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}:{self.packaging}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.{self.packaging}"

    def m2_path(self, home: Path) -> Path:
        """Where ``mvn dependency:get`` leaves it in the local repository under ``home``."""
        return (
            home
            / ".m2"
            / "repository"
            / Path(*self.group.split("."))
            / self.artifact
            / self.version
            / self.file_name
        )


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """A plugin installed into the distribution before the first start."""

    name: str  # the folder it lands in under plugins/ (and the name nodes info reports)
    artifact: MavenArtifact
    why: str  # one line: what the harness needs it for
    #: native libraries the plugin may ship (file name patterns) -> the node attribute set to false when the
    #: installed plugin holds none of them (the probe reads it: an engine on missing libraries kills the node)
    native: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class EngineFlavour:
    """Everything that differs between Elasticsearch and OpenSearch when running a local node."""

    name: str  # registry key, the value of --engine
    display: str  # "Elasticsearch"
    version: str
    distribution: MavenArtifact
    executable: str  # under bin/
    config_file: str  # written into the node's config folder
    java_home_var: str
    path_conf_var: str
    java_opts_var: str
    distribution_var: str  # env var naming an archive or folder to use instead of the fetched one
    fetch_script: str
    default_node_name: str
    cache_folder: str  # under the harness cache folder
    min_java: int = 21
    max_java: int | None = None
    plugin_tool: str | None = None  # under bin/
    plugins: tuple[PluginSpec, ...] = ()
    #: settings only this flavour understands (the node writes the shared ones)
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: other archive names accepted in the cache folder (e.g. the official tar.gz)
    other_archives: tuple[str, ...] = ()
    #: facts about this build that ``harness engine status`` prints
    notes: tuple[str, ...] = ()

    def archive_candidates(self, cache_dir: Path, home: Path) -> list[Path]:
        folder = cache_dir / self.cache_folder
        return [
            folder / self.distribution.file_name,
            *(folder / name for name in self.other_archives),
            self.distribution.m2_path(home),
        ]

    def plugin_candidates(self, plugin: PluginSpec, cache_dir: Path, home: Path) -> list[Path]:
        return [cache_dir / self.cache_folder / plugin.artifact.file_name, plugin.artifact.m2_path(home)]

    def plugin(self, name: str) -> PluginSpec:
        for spec in self.plugins:
            if spec.name == name:
                return spec
        known = ", ".join(p.name for p in self.plugins) or "none"
        raise ConfigError(f"{self.display} has no plugin {name!r} to install: expected one of {known}")
