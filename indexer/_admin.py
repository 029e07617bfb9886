"""Index administration: list and delete the indices this harness built (``harness indices``), on either engine."""

from __future__ import annotations

from dataclasses import dataclass

from base import ConfigError
from indexer._layout import ALIAS_PREFIX
from indexer.backends import Backend

HARNESS_MARK = "r2med-harness"


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """One harness index: its aliases, dataset, build status, analysis, models, size."""

    name: str
    aliases: tuple[str, ...]
    dataset: str
    status: str
    models: tuple[str, ...]
    docs: int
    size_bytes: int
    analysis: str = "?"


def list_indices(backend: Backend) -> list[IndexInfo]:
    """Every index this harness built (marked in its ``_meta``), by name."""
    found = []
    for stats in backend.list_indices(f"{ALIAS_PREFIX}*"):
        meta = backend.get_mapping(stats.name).meta
        if meta.get("harness") != HARNESS_MARK:
            continue
        found.append(
            IndexInfo(
                name=stats.name,
                aliases=stats.aliases,
                dataset=str(meta.get("dataset", "?")),
                status=str(meta.get("status", "?")),
                models=tuple(m["model_id"] for m in meta.get("models", {}).values()),
                docs=stats.docs,
                size_bytes=stats.size_bytes,
                analysis=str(meta.get("analysis", "?")),
            )
        )
    return found


def resolve_deletion(backend: Backend, names: list[str]) -> list[str]:
    """The physical indices behind ``names`` (indices or aliases of this harness), or a ConfigError."""
    targets: list[str] = []
    for name in names:
        if not name.startswith(ALIAS_PREFIX):
            raise ConfigError(
                f"expected a harness index or alias starting with {ALIAS_PREFIX!r}, found {name!r}"
            )
        if "*" in name:
            raise ConfigError(f"expected an exact index or alias name (no wildcards), found {name!r}")
        behind = backend.alias_targets(name) or ([name] if backend.index_exists(name) else [])
        if not behind:
            raise ConfigError(f"expected an existing index or alias, found no index or alias named {name!r}")
        targets.extend(behind)
    return sorted(set(targets))


def delete_indices(backend: Backend, targets: list[str]) -> list[str]:
    """Delete the given physical indices; returns them."""
    for target in targets:
        backend.delete_index(target)
    return targets
