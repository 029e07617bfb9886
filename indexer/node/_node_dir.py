"""A managed node's own folder: data, logs, and a config folder whose config file is written at every start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from base import EngineError
from indexer.node._config import ENGINE_FILE, EngineConfig, recorded_engine
from indexer.node.flavours import EngineFlavour

#: hunspell dictionaries the system may hold (copied in, so the analysis chains can use them)
HUNSPELL = Path("/usr/share/hunspell")


def cluster_name(config: EngineConfig) -> str:
    return str(config.settings.get("cluster.name", f"r2med-{config.name}"))


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_scalar(v) for v in value) + "]"
    return json.dumps(str(value))


def native_attributes(flavour: EngineFlavour, home: Path) -> dict[str, Any]:
    """``node.attr.<name>: false`` for each native library an installed plugin declares and does not hold."""
    out: dict[str, Any] = {}
    for plugin in flavour.plugins:
        folder = home / "plugins" / plugin.name
        for pattern, attribute in plugin.native:
            if folder.is_dir() and not any(
                p for where in (folder, home / "lib") for p in where.rglob(pattern)
            ):
                out[f"node.attr.{attribute}"] = False
    return out


def node_settings(config: EngineConfig, flavour: EngineFlavour, home: Path | None = None) -> dict[str, Any]:
    """The node's config file: our single-node defaults, then the flavour's (and what its installed plugins
    lack), then the config's own."""
    node = config.node_dir
    port = config.http_port
    settings: dict[str, Any] = {
        "cluster.name": cluster_name(config),
        "node.name": config.name,
        "path.data": str(node / "data"),
        "path.logs": str(node / "logs"),
        "network.host": "127.0.0.1",
        "http.port": port,
        # a range: another node on this machine may hold the first port (discovery needs no fixed port here)
        "transport.port": config.transport_port or f"{port + 100}-{port + 199}",
        "discovery.type": "single-node",
        "cluster.routing.allocation.disk.threshold_enabled": False,
        "action.destructive_requires_name": False,
    }
    settings.update(flavour.settings)
    if home is not None:
        settings.update(native_attributes(flavour, home))
    settings.update(config.settings)
    return {k: v for k, v in settings.items() if v is not None}


def _claim(config: EngineConfig, flavour: EngineFlavour) -> None:
    """Mark the folder as this flavour's; a folder holding another engine's data is refused."""
    node = config.node_dir
    holds = recorded_engine(config.state_dir, config.name)
    if holds is not None and holds != flavour.name:
        raise EngineError(
            f"the node folder {node} holds {holds} data, not {flavour.display}: "
            "choose another --name, or delete that folder"
        )
    node.mkdir(parents=True, exist_ok=True)
    (node / ENGINE_FILE).write_text(flavour.name + "\n")
    for sub in ("data", "logs"):
        (node / sub).mkdir(parents=True, exist_ok=True)


def _copy_hunspell(conf: Path) -> None:
    dest = conf / "hunspell" / "en_US"
    if (HUNSPELL / "en_US.dic").is_file() and not dest.is_dir():
        dest.mkdir(parents=True)
        for ext in ("dic", "aff"):
            shutil.copy(HUNSPELL / f"en_US.{ext}", dest / f"en_US.{ext}")


def prepare_node_dir(config: EngineConfig, flavour: EngineFlavour, home: Path) -> Path:
    """Make the node's folder ready to start from ``home``; returns its config folder."""
    _claim(config, flavour)
    conf = config.node_dir / "config"
    if not conf.is_dir():
        shutil.copytree(home / "config", conf)
    _copy_hunspell(conf)
    for name, payload in config.config_files.items():
        (conf / name).parent.mkdir(parents=True, exist_ok=True)
        (conf / name).write_bytes(payload)
    lines = ["# written by `harness engine start`; regenerated at every start"]
    lines += [f"{k}: {_yaml_scalar(v)}" for k, v in node_settings(config, flavour, home).items()]
    (conf / flavour.config_file).write_text("\n".join(lines) + "\n")
    return conf
