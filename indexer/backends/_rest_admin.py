"""Index and template administration: the same REST API on Elasticsearch and OpenSearch, written once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from base import MappingConflictError, NotFound, RequestFailed
from indexer.backends._transport import RestTransport, query_params, segment
from indexer.backends._types import IndexMapping, IndexStats

_MAPPING_ERRORS = frozenset({"illegal_argument_exception", "mapper_parsing_exception", "mapper_exception"})
#: index settings a serverless service sizes itself (and refuses)
SERVERLESS_MANAGED = frozenset(
    {"number_of_shards", "number_of_replicas", "auto_expand_replicas", "refresh_interval"}
)


def without_managed(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` without what a serverless service manages itself, flat (``index.number_of_shards``)
    or nested (``{"index": {"number_of_shards": 1}}``)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if key.removeprefix("index.") in SERVERLESS_MANAGED:
            continue
        kept = without_managed(value) if isinstance(value, Mapping) and key == "index" else value
        if kept != {}:
            out[key] = kept
    return out


class IndexAdministration(RestTransport):
    """Indices, mappings, settings, aliases and index templates."""

    def _index_settings(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Settings for a new index in this engine's dialect (OpenSearch turns k-NN on)."""
        return dict(settings)

    def index_exists(self, name: str) -> bool:
        try:
            self._call("HEAD", f"/{segment(name)}", what=f"checking whether index {name} exists")
        except NotFound:
            return False
        return True

    def create_index(
        self, name: str, *, settings: Mapping[str, Any], mappings: Mapping[str, Any], wait_s: float = 30.0
    ) -> None:
        """Create the index and wait (``wait_s``) for its primary shards to start. A primary the cluster
        cannot place (a node over its disk watermark, an allocation filter) would take every bulk request
        into retries and the run nowhere: the index is deleted again and the refusal says why, in the
        cluster's words (``_cluster/allocation/explain``)."""
        chosen = self._index_settings(settings)
        body = {
            "settings": without_managed(chosen) if self.serverless else chosen,
            "mappings": dict(mappings),
        }
        waited = max(1, int(wait_s))
        params = None if self.serverless else query_params(timeout=f"{waited}s")
        # the client's own timeout outlasts the server's wait (and opensearch-py leaves `timeout` alone)
        client_timeout = wait_s + 30
        try:
            answer = self._call(
                "PUT",
                f"/{segment(name)}",
                what=f"creating index {name}",
                body=body,
                params=params,
                timeout_s=client_timeout,
            )
        except RequestFailed as exc:
            if exc.status == 400 and exc.error_type in _MAPPING_ERRORS:
                raise MappingConflictError(
                    f"{self.display} refused the mapping of new index {name}: {exc}"
                ) from None
            raise
        if not self.serverless and isinstance(answer, Mapping) and answer.get("shards_acknowledged") is False:
            why = self._unassigned_primary(name)
            self.delete_index(name, missing_ok=True)
            raise RequestFailed(
                f"{self.display} created index {name} but could not start its primary shard within "
                f"{waited} s: {why}. The index was deleted again; free disk space on the data "
                "nodes or fix the allocation setting named, then run again"
            )

    def _unassigned_primary(self, name: str) -> str:
        """Why the cluster leaves the index's first primary unassigned, from the allocation explain API."""
        try:
            answer = self._call(
                "GET",
                "/_cluster/allocation/explain",
                what=f"asking why index {name} has no primary shard",
                body={"index": name, "shard": 0, "primary": True},
            )
        except RequestFailed as exc:
            return f"the cluster did not say why ({exc})"
        deciders = [
            decider.get("explanation", "")
            for node in answer.get("node_allocation_decisions", [])
            for decider in node.get("deciders", [])
            if decider.get("decision") == "NO"
        ]
        said = answer.get("allocate_explanation") or answer.get("explanation") or "no explanation given"
        return said + (f" ({'; '.join(dict.fromkeys(deciders))})" if deciders else "")

    def delete_index(self, name: str, *, missing_ok: bool = False) -> bool:
        try:
            self._call("DELETE", f"/{segment(name)}", what=f"deleting index {name}")
        except NotFound:
            if missing_ok:
                return False
            raise
        return True

    def get_mapping(self, name: str) -> IndexMapping:
        body = self._call("GET", f"/{segment(name)}/_mapping", what=f"reading the mapping of {name}")
        if len(body) != 1:
            raise RequestFailed(f"expected {name} to name one index, found {len(body)}: {sorted(body)}")
        index, data = next(iter(body.items()))
        mappings = data.get("mappings", {})
        dynamic = mappings.get("dynamic")
        return IndexMapping(
            index=index,
            properties=mappings.get("properties", {}),
            meta=mappings.get("_meta", {}),
            dynamic=None if dynamic is None else str(dynamic).lower(),
        )

    def _physical(self, index: str) -> str:
        return self.get_mapping(index).index

    def put_mapping(
        self,
        name: str,
        *,
        properties: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        body: dict[str, Any] = {}
        if properties is not None:
            body["properties"] = dict(properties)
        if meta is not None:
            body["_meta"] = dict(meta)
        try:
            self._call("PUT", f"/{segment(name)}/_mapping", what=f"updating the mapping of {name}", body=body)
        except RequestFailed as exc:
            if exc.status == 400 and exc.error_type in _MAPPING_ERRORS:
                raise _mapping_conflict(name, properties or {}, exc) from None
            raise

    def put_settings(self, name: str, settings: Mapping[str, Any]) -> None:
        """Update ``name``'s dynamic settings (on a serverless service, those it does not manage itself)."""
        if self.serverless:
            settings = without_managed(settings)
            if not settings:
                return
        self._call(
            "PUT", f"/{segment(name)}/_settings", what=f"updating the settings of {name}", body=dict(settings)
        )

    def get_settings(self, name: str) -> dict[str, Any]:
        body = self._call("GET", f"/{segment(name)}/_settings", what=f"reading the settings of {name}")
        if len(body) != 1:
            raise RequestFailed(f"expected {name} to name one index, found {len(body)}: {sorted(body)}")
        settings: dict[str, Any] = next(iter(body.values())).get("settings", {})
        return settings

    def refresh(self, name: str) -> None:
        self._call("POST", f"/{segment(name)}/_refresh", what=f"refreshing {name}")

    def replaced_docs_releasable(self, name: str) -> bool:
        """Whether every shard's retention leases have moved past its last operation (flushing first): only
        then can a merge drop the documents that updates replaced (soft deletes are kept for recovery until
        the leases move, which the engine does every 30 s). A serverless service merges on its own: True."""
        if self.serverless:
            return True
        self._call("POST", f"/{segment(name)}/_flush", what=f"flushing {name}")
        stats = self._call(
            "GET",
            f"/{segment(name)}/_stats/docs",
            what=f"reading the shard stats of {name}",
            params=query_params(level="shards"),
        )
        for copies in stats["indices"][name]["shards"].values():
            for shard in copies:
                leases = shard.get("retention_leases", {}).get("leases", [])
                top = shard.get("seq_no", {}).get("max_seq_no", -1)
                if any(int(lease["retaining_seq_no"]) <= top for lease in leases):
                    return False
        return True

    def force_merge(
        self,
        name: str,
        *,
        max_segments: int | None = 1,
        timeout_s: float = 600.0,
        expunge_deletes: bool = False,
    ) -> None:
        """Merge ``name`` down to ``max_segments`` segments, or (``expunge_deletes``) merge away the
        segments that hold deleted documents; waits for the merge. A serverless service merges on its own
        (and has no _forcemerge): nothing is sent."""
        if self.serverless:
            return
        params = (
            query_params(only_expunge_deletes=True)
            if expunge_deletes
            else query_params(max_num_segments=max_segments)
        )
        self._call(
            "POST",
            f"/{segment(name)}/_forcemerge",
            what=f"force-merging {name}",
            params=params,
            timeout_s=timeout_s,
        )

    def list_indices(self, pattern: str) -> list[IndexStats]:
        rows = self._call(
            "GET",
            f"/_cat/indices/{segment(pattern)}",
            what=f"listing indices {pattern}",
            params=query_params(
                format="json",
                bytes="b",
                expand_wildcards="open",
                h="index,health,docs.count,docs.deleted,store.size",
            ),
        )
        if not rows:
            return []
        aliases = self._call("GET", f"/{segment(pattern)}/_alias", what=f"reading the aliases of {pattern}")
        return [
            IndexStats(
                name=row["index"],
                docs=int(row.get("docs.count") or 0),
                size_bytes=int(row.get("store.size") or 0),
                health=str(row.get("health") or "unknown"),
                aliases=tuple(sorted(aliases.get(row["index"], {}).get("aliases", {}))),
                deleted=int(row.get("docs.deleted") or 0),
            )
            for row in sorted(rows, key=lambda r: str(r["index"]))
        ]

    def alias_targets(self, alias: str) -> list[str]:
        try:
            body = self._call("GET", f"/_alias/{segment(alias)}", what=f"reading alias {alias}")
        except NotFound:
            return []
        return sorted(body)

    def point_alias(self, alias: str, index: str) -> None:
        """Point ``alias`` at ``index`` alone, in one atomic request."""
        actions: list[dict[str, Any]] = [
            {"remove": {"index": old, "alias": alias}} for old in self.alias_targets(alias) if old != index
        ]
        actions.append({"add": {"index": index, "alias": alias}})
        self._call("POST", "/_aliases", what=f"pointing alias {alias} at {index}", body={"actions": actions})

    def put_index_template(self, name: str, body: Mapping[str, Any]) -> None:
        self._call(
            "PUT",
            f"/_index_template/{segment(name)}",
            what=f"installing index template {name}",
            body=dict(body),
        )

    def delete_index_template(self, name: str, *, missing_ok: bool = False) -> bool:
        try:
            self._call("DELETE", f"/_index_template/{segment(name)}", what=f"deleting index template {name}")
        except NotFound:
            if missing_ok:
                return False
            raise
        return True


def _mapping_conflict(index: str, properties: Mapping[str, Any], exc: RequestFailed) -> MappingConflictError:
    """Name the field(s) the engine complains about (it names them in brackets), and both sides if we can."""
    text = str(exc)
    named = [f for f in properties if re.search(rf"\[{re.escape(f)}\]", text)]
    fields = ", ".join(named or list(properties)) or "(meta only)"
    return MappingConflictError(
        f"mapping conflict on index {index}, field {fields}: the existing mapping cannot take the new one "
        f"(nothing was changed). Delete the index (`harness indices delete`) or keep the existing layout. "
        f"The engine said: {text}"
    )
