"""Index layout: names, mappings and settings built from the JSON resources.

One physical index per (dataset, corpus fingerprint, text-side layout), found
through a stable alias ``r2med-<dataset-slug>``. The text side carries both
BM25 parameterisations (Elasticsearch's k1=1.2/b=0.75 on the field itself,
R2MED's k1=0.9/b=0.4 on the ``.r2med`` sub-field), so choosing BM25 by name is
a query-time choice. Vector fields are added per model without touching the
text side.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from indexer._exceptions import ConfigError, IndexingError
from indexer._probe import Capabilities

MAPPING_VERSION = 1
ALIAS_PREFIX = "r2med-"

#: BM25 parameterisations by name -> the field suffix that carries them
BM25_FIELDS: dict[str, str] = {"es": "", "r2med": ".r2med"}
BM25_PARAMS: dict[str, tuple[float, float]] = {"es": (1.2, 0.75), "r2med": (0.9, 0.4)}

#: analysis choices, most preferred first; the probe picks the first the engine supports
ANALYSIS_PREFERENCE: tuple[str, ...] = ("english", "hunspell_en", "standard_stop")
VECTOR_INDEX_TYPES: tuple[str, ...] = ("hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw", "flat", "int8_flat")


def _resource(*parts: str) -> dict[str, Any]:
    ref = resources.files("indexer").joinpath("resources", *parts)
    data: dict[str, Any] = json.loads(ref.read_text(encoding="utf-8"))
    return data


def slug(name: str, *, fallback: str | None = None) -> str:
    """Lower-case letters, digits and dashes: for index names, file names and HTML ids.

    A name with none of those gives ``fallback``, or a :class:`ConfigError` without one.
    """
    out = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not out:
        if fallback is not None:
            return fallback
        raise ConfigError(f"expected a name with letters or digits, found {name!r}")
    return out


def alias_for(dataset_name: str) -> str:
    return f"{ALIAS_PREFIX}{slug(dataset_name)}"


@dataclass(frozen=True, slots=True)
class VectorOptions:
    index_type: str = "hnsw"
    m: int = 16
    ef_construction: int = 100

    def __post_init__(self) -> None:
        if self.index_type not in VECTOR_INDEX_TYPES:
            raise ConfigError(
                f"expected a vector index type in {list(VECTOR_INDEX_TYPES)}, found {self.index_type!r}"
            )
        if not 2 <= self.m <= 512:
            raise ConfigError(f"expected HNSW m between 2 and 512, found {self.m}")
        if not 10 <= self.ef_construction <= 3200:
            raise ConfigError(
                f"expected HNSW ef_construction between 10 and 3200, found {self.ef_construction}"
            )


def choose_analysis(caps: Capabilities) -> str:
    for name in ANALYSIS_PREFERENCE:
        needs = _resource("analysis", f"{name}.json")["requires"]["analyzers"]
        if all(caps.has_analyzer(a) for a in needs):
            return name
    raise IndexingError(f"the engine offers none of the analysis chains {list(ANALYSIS_PREFERENCE)}")


def text_side(analysis: str) -> dict[str, Any]:
    """Settings and mappings of the text side, placeholders filled, for a given analysis choice."""
    template = _resource("mappings", f"corpus-v{MAPPING_VERSION}.json")
    chain = _resource("analysis", f"{analysis}.json")
    body: dict[str, Any] = {"settings": copy.deepcopy(template["settings"]), "mappings": template["mappings"]}
    rendered = json.dumps(body["mappings"]).replace('"{analyzer}"', json.dumps(chain["analyzer_name"]))
    body["mappings"] = json.loads(rendered)
    if chain["analysis"]:
        body["settings"]["index"]["analysis"] = chain["analysis"]
    return body


def layout_hash(analysis: str) -> str:
    """A short hash of everything that fixes the text side (mapping version, analysis, similarities)."""
    body = text_side(analysis)
    canonical = json.dumps({"v": MAPPING_VERSION, "analysis": analysis, "body": body}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


def index_name(dataset_name: str, corpus_fingerprint: str, analysis: str) -> str:
    return f"{alias_for(dataset_name)}-{corpus_fingerprint[:12]}-m{MAPPING_VERSION}-{layout_hash(analysis)}"


def vector_field(dims: int, options: VectorOptions) -> dict[str, Any]:
    template = _resource("mappings", "vector-field.json")
    field: dict[str, Any] = {k: v for k, v in template.items() if not k.startswith("_")}
    field["dims"] = dims
    opts: dict[str, Any] = {"type": options.index_type}
    if options.index_type.endswith("hnsw"):
        opts.update(m=options.m, ef_construction=options.ef_construction)
    field["index_options"] = opts
    return field


def mapping_hash(mapping: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(mapping, sort_keys=True).encode()).hexdigest()[:16]
