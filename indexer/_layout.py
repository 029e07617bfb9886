"""Index layout: names, mappings and settings built from the JSON resources.

One physical index per (dataset, corpus fingerprint, text-side layout, and the
numerics of its vectors when they are not the torch fp32 reference), found
through a stable alias ``r2med-<dataset-slug>``. The text side carries both
BM25 parameterisations (Elasticsearch's k1=1.2/b=0.75 on the field itself,
R2MED's k1=0.9/b=0.4 on the ``.r2med`` sub-field), so choosing BM25 by name is
a query-time choice. The analysis chain (``english``, ``hunspell``, ``standard``)
is asked for by name or chosen from what the engine offers; it is part of the
layout hash, so each chain has its own index. Vector fields are added per model
without touching the text side, written in the engine's own dialect by its backend
(:class:`~indexer.VectorSpec`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from base import CapabilityMissing, ConfigError, IndexingError, slug
from indexer.backends._types import Capabilities, VectorSpec

MAPPING_VERSION = 1
ALIAS_PREFIX = "r2med-"

#: BM25 parameterisations by name -> the field suffix that carries them
BM25_FIELDS: dict[str, str] = {"es": "", "r2med": ".r2med"}
BM25_PARAMS: dict[str, tuple[float, float]] = {"es": (1.2, 0.75), "r2med": (0.9, 0.4)}

#: analysis chains (``resources/analysis/<name>.json``), most preferred first; without ``--analysis``
#: the first the engine supports is used
ANALYSIS_CHAINS: tuple[str, ...] = ("english", "hunspell", "standard")
VECTOR_INDEX_TYPES: tuple[str, ...] = ("hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw", "flat", "int8_flat")
#: OpenSearch k-NN engines a user may name (only lucene runs on the integ-test build; see the backend)
KNN_ENGINES: tuple[str, ...] = ("lucene", "faiss", "nmslib")
#: every vector field's similarity: vectors are L2-normalised, so dot product is cosine (and cheaper)
VECTOR_SIMILARITY = "dot_product"


def _resource(*parts: str) -> dict[str, Any]:
    ref = resources.files("indexer").joinpath("resources", *parts)
    data: dict[str, Any] = json.loads(ref.read_text(encoding="utf-8"))
    return data


def alias_for(dataset_name: str) -> str:
    return f"{ALIAS_PREFIX}{slug(dataset_name)}"


@dataclass(frozen=True, slots=True)
class VectorOptions:
    index_type: str = "hnsw"
    m: int = 16
    ef_construction: int = 100
    #: the OpenSearch k-NN engine (None: lucene); Elasticsearch takes no engine choice
    engine: str | None = None

    def __post_init__(self) -> None:
        if self.engine is not None and self.engine not in KNN_ENGINES:
            raise ConfigError(f"expected a k-NN engine in {list(KNN_ENGINES)}, found {self.engine!r}")
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


def check_analysis(name: str) -> str:
    """``name`` when it is a known analysis chain; a ConfigError listing them otherwise."""
    if name not in ANALYSIS_CHAINS:
        raise ConfigError(f"expected --analysis in {list(ANALYSIS_CHAINS)}, found {name!r}")
    return name


def _missing_analyzers(name: str, caps: Capabilities) -> list[str]:
    needs: list[str] = _resource("analysis", f"{name}.json")["requires"]["analyzers"]
    return [a for a in needs if not caps.has_analyzer(a)]


def choose_analysis(caps: Capabilities, requested: str | None = None) -> str:
    """The analysis chain asked for (when the engine has what it needs), or the engine's best."""
    if requested is not None:
        missing = _missing_analyzers(check_analysis(requested), caps)
        if missing:
            offered = [n for n in ANALYSIS_CHAINS if not _missing_analyzers(n, caps)]
            raise CapabilityMissing(
                f"the {caps.flavour} cluster cannot run the {requested!r} analysis chain: it lacks "
                f"{', '.join(missing)} (chains it can run: {', '.join(offered) or 'none'})"
            )
        return requested
    for name in ANALYSIS_CHAINS:
        if not _missing_analyzers(name, caps):
            return name
    raise IndexingError(f"the engine offers none of the analysis chains {list(ANALYSIS_CHAINS)}")


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


def numerics_suffix(numerics: Iterable[str]) -> str:
    """What an index name gains for vectors of numerics other than the torch fp32 reference (given as
    ``backend/precision``; the reference is left out by the caller): ``-openvino-bf16``, or nothing."""
    return "".join(f"-{slug(n)}" for n in sorted(set(numerics)))


def index_name(
    dataset_name: str, corpus_fingerprint: str, analysis: str, numerics: Iterable[str] = ()
) -> str:
    """The physical index: dataset, corpus, text layout, and the numerics of its vectors when they are not
    the reference (so indices of other numerics stand beside the reference's, which keep their names)."""
    base = f"{alias_for(dataset_name)}-{corpus_fingerprint[:12]}-m{MAPPING_VERSION}-{layout_hash(analysis)}"
    return base + numerics_suffix(numerics)


def vector_spec(dims: int, options: VectorOptions) -> VectorSpec:
    """The engine-neutral vector field of a model; its backend writes it in the engine's dialect."""
    return VectorSpec(
        dims=dims,
        similarity=VECTOR_SIMILARITY,
        index_type=options.index_type,
        m=options.m,
        ef_construction=options.ef_construction,
        engine=options.engine,
    )


def vector_options_record(options: VectorOptions) -> dict[str, Any]:
    """How a vector field was indexed, as recorded in the index's _meta (the same on both engines)."""
    record: dict[str, Any] = {"type": options.index_type, "similarity": VECTOR_SIMILARITY}
    if options.index_type.endswith("hnsw"):
        record.update(m=options.m, ef_construction=options.ef_construction)
    if options.engine is not None:
        record["engine"] = options.engine
    return record


def mapping_hash(mapping: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(mapping, sort_keys=True).encode()).hexdigest()[:16]
