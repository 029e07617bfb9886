"""Index administration: list and delete the indices this harness built (``harness indices``)."""

from __future__ import annotations

from dataclasses import dataclass

from elasticsearch import Elasticsearch

from indexer._exceptions import ConfigError
from indexer._layout import ALIAS_PREFIX

HARNESS_MARK = "r2med-harness"


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """One harness index: its aliases, dataset, build status, models, size."""

    name: str
    aliases: tuple[str, ...]
    dataset: str
    status: str
    models: tuple[str, ...]
    docs: int
    size_bytes: int


def list_indices(client: Elasticsearch) -> list[IndexInfo]:
    """Every index this harness built (marked in its ``_meta``), by name."""
    rows = client.cat.indices(
        index=f"{ALIAS_PREFIX}*", format="json", bytes="b", expand_wildcards="open"
    ).body
    aliases = client.indices.get_alias(index=f"{ALIAS_PREFIX}*").body if rows else {}
    found = []
    for row in sorted(rows, key=lambda r: r["index"]):
        name = row["index"]
        meta = client.indices.get_mapping(index=name)[name]["mappings"].get("_meta", {})
        if meta.get("harness") != HARNESS_MARK:
            continue
        found.append(
            IndexInfo(
                name=name,
                aliases=tuple(aliases.get(name, {}).get("aliases", {})),
                dataset=str(meta.get("dataset", "?")),
                status=str(meta.get("status", "?")),
                models=tuple(m["model_id"] for m in meta.get("models", {}).values()),
                docs=int(row["docs.count"] or 0),
                size_bytes=int(row["store.size"] or 0),
            )
        )
    return found


def resolve_deletion(client: Elasticsearch, names: list[str]) -> list[str]:
    """The physical indices behind ``names`` (indices or aliases of this harness), or a ConfigError."""
    targets: list[str] = []
    for name in names:
        if not name.startswith(ALIAS_PREFIX):
            raise ConfigError(
                f"expected a harness index or alias starting with {ALIAS_PREFIX!r}, found {name!r}"
            )
        if "*" in name:
            raise ConfigError(f"expected an exact index or alias name (no wildcards), found {name!r}")
        found = client.indices.get(index=name, ignore_unavailable=True).body
        if not found:
            raise ConfigError(f"expected an existing index or alias, found no index or alias named {name!r}")
        targets.extend(found)
    return sorted(set(targets))


def delete_indices(client: Elasticsearch, targets: list[str]) -> list[str]:
    """Delete the given physical indices; returns them."""
    for target in targets:
        client.indices.delete(index=target)
    return targets
