"""Capability probe: what the cluster we talk to can do.

Later code asks the probe instead of assuming: the stripped integ-test build
has no ``english`` analyzer and no ``rrf``/``linear`` retrievers, the full
distribution has both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from elasticsearch import ApiError, Elasticsearch

PROBE_PATTERN = "r2med-capability-probe-no-such-index*"


@dataclass(frozen=True, slots=True)
class Capabilities:
    version: str
    flavour: str  # "elasticsearch" or "opensearch"
    build_flavour: str
    modules: tuple[str, ...]
    analyzers: dict[str, bool]
    retrievers: dict[str, bool]
    license: str
    vector_index_types: tuple[str, ...]
    nodes: int
    notes: tuple[str, ...] = field(default=())

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    def has_analyzer(self, name: str) -> bool:
        return self.analyzers.get(name, False)

    def has_retriever(self, name: str) -> bool:
        return self.retrievers.get(name, False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _version_tuple(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split("-")[0].split("."):
        out.append(int(part) if part.isdigit() else 0)
    return tuple(out)


def _analyze_ok(client: Elasticsearch, body: dict[str, Any]) -> bool:
    try:
        client.indices.analyze(**body, text="running probes")
    except ApiError:
        return False
    return True


def _retriever_ok(client: Elasticsearch, retriever: dict[str, Any]) -> bool:
    try:
        client.search(index=PROBE_PATTERN, allow_no_indices=True, retriever=retriever, size=1)
    except ApiError:
        return False
    return True


def probe(client: Elasticsearch) -> Capabilities:
    """Ask the cluster; every check is read-only and creates nothing."""
    nodes = client.nodes.info(node_id="_local", metric=["plugins"]).body["nodes"]
    local = next(iter(nodes.values()))
    version = str(local.get("version", "0"))
    build_flavour = str(local.get("build_flavor", "unknown"))
    distribution = str(local.get("distribution", "") or "")
    flavour = "opensearch" if distribution == "opensearch" else "elasticsearch"
    modules = tuple(
        sorted(m["name"] for m in local.get("modules", []))
        + sorted(p["name"] for p in local.get("plugins", []))
    )
    health = client.cluster.health().body
    try:
        license_type = str(client.license.get().body["license"]["type"])
    except (ApiError, KeyError):
        license_type = "unknown"

    analyzers = {
        "english": _analyze_ok(client, {"analyzer": "english"}),
        "standard": _analyze_ok(client, {"analyzer": "standard"}),
        "hunspell_en_US": _analyze_ok(
            client, {"tokenizer": "standard", "filter": [{"type": "hunspell", "locale": "en_US"}]}
        ),
        "porter_stem": _analyze_ok(client, {"tokenizer": "standard", "filter": ["porter_stem"]}),
    }
    sub: list[dict[str, Any]] = [
        {"standard": {"query": {"match_all": {}}}},
        {"standard": {"query": {"match_all": {}}}},
    ]
    retrievers = {
        "rrf": _retriever_ok(client, {"rrf": {"retrievers": sub}}),
        "linear": _retriever_ok(
            client, {"linear": {"retrievers": [{"retriever": r, "weight": 1.0} for r in sub]}}
        ),
    }
    vt = _version_tuple(version)
    types = ["hnsw", "flat"]
    if vt >= (8, 12):
        types += ["int8_hnsw", "int8_flat"]
    if vt >= (8, 15):
        types += ["int4_hnsw", "int4_flat"]
    if vt >= (8, 18):
        types += ["bbq_hnsw", "bbq_flat"]
    notes = []
    if not analyzers["english"]:
        notes.append("no 'english' analyzer (analysis-common missing): the index falls back to standard+stop")
    if not retrievers["rrf"]:
        notes.append("engine 'rrf' retriever unavailable: hybrid fuses on the client only")
    return Capabilities(
        version=version,
        flavour=flavour,
        build_flavour=build_flavour,
        modules=modules,
        analyzers=analyzers,
        retrievers=retrievers,
        license=license_type,
        vector_index_types=tuple(types),
        nodes=int(health.get("number_of_nodes", 1)),
        notes=tuple(notes),
    )
