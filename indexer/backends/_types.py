"""Typed answers of a backend: what the cluster is, can do, and returned."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from base import CapabilityMissing, ConfigError

#: features a backend's probe reports (Capabilities.features keys); declared per version in ._features
KNN = "knn"  # what the vector arms need: approximate kNN, or exact kNN by script_score where there is none
APPROXIMATE_KNN = (
    "approximate_knn"  # HNSW kNN inside _search (Elasticsearch's knn section, OpenSearch's knn query)
)
SCRIPT_SCORE_KNN = "script_score_knn"  # exact kNN: script_score over a dense_vector field (Elasticsearch)
KNN_SEARCH_ENDPOINT = "knn_search_endpoint"  # Elasticsearch 8.0-8.3's _knn_search (not used: outside msearch)
INT8_HNSW = "int8_hnsw"
INT4_HNSW = "int4_hnsw"
BBQ_HNSW = "bbq_hnsw"
HYBRID_QUERY = "hybrid_query"  # OpenSearch neural-search `hybrid` query (normalization in a search pipeline)
SEARCH_TEMPLATE = "search_template"  # mustache search templates
RRF_RETRIEVER = "rrf_retriever"  # Elasticsearch's `rrf` retriever (engine-side reciprocal rank fusion)
LINEAR_RETRIEVER = "linear_retriever"  # Elasticsearch's `linear` retriever (engine-side normalised sum)
RANK_EVAL = "rank_eval"  # the rank-eval module's `_rank_eval` API (the engine scores rated searches itself)
LUCENE_ENGINE = "lucene_engine"  # OpenSearch k-NN's lucene engine
FAISS_ENGINE = "faiss_engine"  # OpenSearch k-NN's faiss engine (native libraries)
SEARCH_PIPELINE = "search_pipeline"  # OpenSearch search pipelines
NORMALIZATION_PROCESSOR = "normalization_processor"  # neural-search: min_max and l2 normalization
Z_SCORE = "z_score"  # neural-search: z_score normalization
RRF_PROCESSOR = "score_ranker_processor"  # neural-search: reciprocal rank fusion
FEATURES: tuple[str, ...] = (
    KNN,
    APPROXIMATE_KNN,
    SCRIPT_SCORE_KNN,
    KNN_SEARCH_ENDPOINT,
    INT8_HNSW,
    INT4_HNSW,
    BBQ_HNSW,
    RRF_RETRIEVER,
    LINEAR_RETRIEVER,
    HYBRID_QUERY,
    SEARCH_PIPELINE,
    NORMALIZATION_PROCESSOR,
    Z_SCORE,
    RRF_PROCESSOR,
    LUCENE_ENGINE,
    FAISS_ENGINE,
    SEARCH_TEMPLATE,
    RANK_EVAL,
)

#: OpenSearch hybrid query techniques: normalization-processor (min_max, l2, z_score), score-ranker-processor (rrf)
HYBRID_TECHNIQUES: tuple[str, ...] = ("min_max", "l2", "z_score", "rrf")

#: engine-side fusion kinds a backend may build (``Backend.fusion_search``), and the feature each needs
FUSION_KINDS: dict[str, str] = {
    "rrf": RRF_RETRIEVER,
    "linear": LINEAR_RETRIEVER,
    "hybrid_query": HYBRID_QUERY,
}


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the cluster we talk to can do; later code asks this instead of assuming."""

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
    features: dict[str, bool] = field(default_factory=dict)
    #: feature -> why it is missing and what to do (only for features that are False)
    missing: dict[str, str] = field(default_factory=dict)
    #: a serverless project (Elastic Cloud Serverless, Amazon OpenSearch Serverless): the service's APIs only
    serverless: bool = False

    @property
    def major(self) -> int:
        head = self.version.split(".")[0]
        return int(head) if head.isdigit() else 0

    def has_analyzer(self, name: str) -> bool:
        return self.analyzers.get(name, False)

    def has_retriever(self, name: str) -> bool:
        return self.retrievers.get(name, False)

    def has(self, feature: str) -> bool:
        return self.features.get(feature, False)

    def require(self, feature: str) -> None:
        """Raise :class:`CapabilityMissing` (saying why, and what to do) unless the cluster offers ``feature``."""
        if feature not in FEATURES:
            raise ConfigError(f"unknown feature {feature!r}: expected one of {', '.join(FEATURES)}")
        if not self.has(feature):
            raise CapabilityMissing(self.missing.get(feature, f"the cluster does not offer {feature}"))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """What ``GET /`` (or the local node) says the cluster is: asked first, before any client call."""

    product: str  # "elasticsearch" | "opensearch"
    version: str  # "" where the service does not say (Amazon OpenSearch Serverless)
    build_flavour: str  # Elasticsearch build_flavor ("default", "oss", "serverless"), OpenSearch build_type
    serverless: bool = False

    @property
    def major(self) -> int:
        return self.version_tuple[0] if self.version else 0

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return version_tuple(self.version)


def version_tuple(version: str) -> tuple[int, ...]:
    out = []
    for part in version.split("-")[0].split("."):
        out.append(int(part) if part.isdigit() else 0)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ClusterHealth:
    status: str  # green | yellow | red
    nodes: int
    timed_out: bool = False


@dataclass(frozen=True, slots=True)
class BulkItem:
    op: str  # index | update | create | delete
    doc_id: str
    status: int
    error_type: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.status < 300


@dataclass(frozen=True, slots=True)
class BulkResult:
    items: tuple[BulkItem, ...]
    took_ms: float

    @property
    def failed(self) -> tuple[BulkItem, ...]:
        return tuple(i for i in self.items if not i.ok)


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    score: float | None
    source: Mapping[str, Any] | None = None
    sort: tuple[Any, ...] | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search's hits (in rank order) and engine time; in an msearch, ``error`` is set instead."""

    hits: tuple[Hit, ...]
    took_ms: float
    status: int = 200
    error: str | None = None

    @property
    def ranking(self) -> dict[str, float]:
        return {h.id: float(h.score) if h.score is not None else 0.0 for h in self.hits}

    def ranking_by(self, id_field: str) -> dict[str, float]:
        """The ranking with each hit named by its ``_source`` field ``id_field`` (a dotted path), not ``_id``.

        Several hits with the same id (passages of one document) count once, at the best rank.
        A hit without the field is a :class:`ConfigError` naming it.
        """
        if id_field == "_id":
            return self.ranking
        out: dict[str, float] = {}
        for h in self.hits:
            value: Any = h.source or {}
            for part in id_field.split("."):
                value = value.get(part) if isinstance(value, Mapping) else None
            if value is None or isinstance(value, Mapping | list):
                raise ConfigError(
                    f"expected every hit to hold the id field {id_field!r} (a string or number in _source), "
                    f"found {'none' if value is None else type(value).__name__} in document {h.id}"
                )
            out.setdefault(str(value), float(h.score) if h.score is not None else 0.0)
        return out


@dataclass(frozen=True, slots=True)
class IndexMapping:
    index: str  # the physical index (an alias resolves to it)
    properties: dict[str, Any]
    meta: dict[str, Any]
    dynamic: str | None = None  # "strict", "true", "false" (as the engine reports it), None when unset


@dataclass(frozen=True, slots=True)
class IndexStats:
    name: str
    docs: int
    size_bytes: int
    health: str
    aliases: tuple[str, ...] = ()
    deleted: int = (
        0  # replaced or deleted documents not merged away yet (they still count in BM25's statistics)
    )


#: vector similarities, in Elasticsearch's names (what the layout asks for)
SIMILARITIES: tuple[str, ...] = ("dot_product", "cosine", "l2_norm", "max_inner_product")


@dataclass(frozen=True, slots=True)
class VectorSpec:
    """A vector field, engine-neutral; each backend writes it in its own mapping dialect."""

    dims: int
    similarity: str = "dot_product"
    index_type: str = "hnsw"
    m: int = 16
    ef_construction: int = 100
    #: OpenSearch k-NN engine; only ``lucene`` runs here (None means lucene)
    engine: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.dims <= 4096:
            raise ConfigError(f"expected vector dimensions between 1 and 4096, found {self.dims}")
        if self.similarity not in SIMILARITIES:
            raise ConfigError(f"expected a similarity in {list(SIMILARITIES)}, found {self.similarity!r}")


@dataclass(frozen=True, slots=True)
class FusionParams:
    """Parameters of an engine-side fusion of one lexical query and one kNN search."""

    window: int  # results each side contributes (rank_window_size)
    weights: tuple[float, float] = (1.0, 1.0)  # lexical, vector
    rank_constant: int = 60  # rrf
    #: how OpenSearch's hybrid query normalizes and combines (HYBRID_TECHNIQUES)
    technique: str = "min_max"

    def __post_init__(self) -> None:
        if self.technique not in HYBRID_TECHNIQUES:
            raise ConfigError(
                f"expected a hybrid technique in {', '.join(HYBRID_TECHNIQUES)}, found {self.technique!r}"
            )
        if self.window < 1 or self.rank_constant < 1:
            raise ConfigError(
                f"expected a positive window and rank constant, found {self.window} and {self.rank_constant}"
            )
        if any(w < 0 for w in self.weights) or not any(w > 0 for w in self.weights):
            raise ConfigError(f"expected weights >= 0, not all 0, found {self.weights}")


@dataclass(frozen=True, slots=True)
class KnnSpec:
    """One approximate kNN search: ``k`` neighbours from ``num_candidates`` per shard."""

    field: str
    vector: Sequence[float]
    k: int
    num_candidates: int

    def __post_init__(self) -> None:
        if self.k < 1 or self.num_candidates < self.k:
            raise ConfigError(
                f"expected 1 <= k <= num_candidates, found k={self.k}, num_candidates={self.num_candidates}"
            )


@dataclass(frozen=True, slots=True)
class RatedRequest:
    """One search of a ``_rank_eval`` request: its id, its query, and the ratings of documents (by ``_id``)."""

    id: str
    query: Mapping[str, Any]
    ratings: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class RankEvalResult:
    """What ``_rank_eval`` answered: the mean, each request's score, and the ids it ranked, in order."""

    metric_score: float
    per_query: dict[str, float]
    hits: dict[str, tuple[str, ...]]
    failures: dict[str, str] = field(default_factory=dict)
