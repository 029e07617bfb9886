"""The end of an index build: serving settings, replaced documents merged away, verification, and the alias
moved to the index only once it is verified."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from base import VerificationError
from indexer._layout import alias_for, mapping_hash
from indexer._target import Layout
from indexer.backends import Backend
from indexer.data import Dataset


def serving_settings(replicas: int, refresh_interval: str = "1s") -> dict[str, Any]:
    """Index settings once a load is over (what the loading settings replace)."""
    return {"refresh_interval": refresh_interval, "number_of_replicas": replicas}


def finish(
    backend: Backend,
    layout: Layout,
    dataset: Dataset,
    fields: list[str],
    meta: dict[str, Any],
    replicas: int | None,
    console: Console,
) -> str:
    """Serving settings (``replicas`` None: the index's own left alone), verification, then the alias:
    published only when verified. Returns the mapping hash."""
    name, alias = layout.name, layout.alias
    meta["status"] = "loaded"
    meta["mapping_hash"] = mapping_hash(backend.get_mapping(name).properties)
    backend.put_mapping(name, meta=meta)
    if replicas is not None:
        backend.put_settings(name, {"index": serving_settings(replicas, layout.refresh_interval)})
    expunge_deletes(backend, name, console)
    verify(backend, name, dataset, fields)
    meta["status"] = "published"
    meta["published"] = datetime.now(UTC).isoformat()
    backend.put_mapping(name, meta=meta)
    publish(backend, alias, name)
    return str(meta["mapping_hash"])


#: how long to wait for the engine to release replaced documents (it moves its retention leases every 30 s,
#: from the index's creation on; the interval, index.soft_deletes.retention_lease.sync_interval, is refused as
#: an unknown setting by Elasticsearch 9.5.4 and OpenSearch 3.5.0: only their test builds register it)
RELEASE_WAIT_S = 90.0


def expunge_deletes(backend: Backend, name: str, console: Console) -> int:
    """Merge away documents that a resume or a new model's vectors replaced: until merged they still count
    in BM25's document frequencies, so the same index would rank differently from a fresh build, and
    differently again whenever Lucene happens to merge. Returns how many are left (0, or a warning)."""
    backend.refresh(name)
    (stats,) = backend.list_indices(name)
    if not stats.deleted:
        return 0
    console.print(
        f"{name}: {stats.deleted} replaced documents still count in BM25's statistics; waiting for the engine "
        "to release them (up to 30 s), then merging them away",
        highlight=False,
    )
    deadline = time.monotonic() + RELEASE_WAIT_S
    while not backend.replaced_docs_releasable(name) and time.monotonic() < deadline:
        time.sleep(1.0)  # polls a condition the engine reports; the flush inside moves it along
    backend.put_settings(name, {"index": {"merge.policy.expunge_deletes_allowed": 0}})  # default: >10% only
    backend.force_merge(name, expunge_deletes=True)
    backend.put_settings(name, {"index": {"merge.policy.expunge_deletes_allowed": None}})
    backend.refresh(name)
    (stats,) = backend.list_indices(name)
    if stats.deleted:
        console.print(
            f"warning: {name} still holds {stats.deleted} replaced documents after the merge; lexical scores "
            "may differ slightly from a fresh build until the engine merges them",
            style="yellow",
            highlight=False,
        )
    return stats.deleted


def verify(backend: Backend, index: str, dataset: Dataset, vector_fields: Sequence[str]) -> None:
    """Raise VerificationError unless the index holds exactly the dataset's corpus."""
    backend.refresh(index)
    count = backend.count(index)
    problems = []
    if count != dataset.corpus_size:
        problems.append(f"document count {count} != corpus size {dataset.corpus_size}")
    for f in vector_fields:
        n = backend.count(index, {"exists": {"field": f}})
        if n != dataset.corpus_size:
            problems.append(f"{n} documents have vectors in {f}, expected {dataset.corpus_size}")
    meta = backend.get_mapping(index).meta
    if meta.get("fingerprint", {}).get("corpus") != dataset.fingerprint.corpus:
        problems.append(
            f"recorded corpus fingerprint {meta.get('fingerprint', {}).get('corpus')} != data {dataset.fingerprint.corpus}"
        )
    if problems:
        raise VerificationError(
            f"index {index} failed verification and was not published: " + "; ".join(problems)
        )


def publish(backend: Backend, alias: str, index: str) -> None:
    """Point ``alias`` at ``index`` alone, atomically."""
    backend.point_alias(alias, index)


def resolve_alias(backend: Backend, dataset_name: str) -> tuple[str, dict[str, Any]] | None:
    """(physical index, its _meta) behind the dataset's alias, or None."""
    targets = backend.alias_targets(alias_for(dataset_name))
    if not targets:
        return None
    return targets[0], backend.get_mapping(targets[0]).meta
