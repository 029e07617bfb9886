"""The index and its embeddings as keys (``[index]``, ``[embedding]``): what ``harness index`` builds and
``harness run`` builds and searches, through the same :meth:`IndexTable.options` and
:meth:`EmbeddingTable.embedder`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import ConfigError
from harness._errors import SettingError
from harness.keys import MAX_RETRIES, PERFORMANCE, RESULTS, between, key
from harness.strategies import LEXICAL_FIELDS
from indexer import (
    ANALYSIS_CHAINS,
    BM25_FIELDS,
    DEFAULT_EMBED_BACKEND,
    KNN_ENGINES,
    VECTOR_INDEX_TYPES,
    CachedEmbedder,
    EmbeddingCache,
    IndexOptions,
    UserMapping,
    VectorOptions,
    backend_names,
    build_encoder,
    check_backend_name,
    endpoint_for,
    remote_code_models,
    resolve_model,
)

_INDEX = IndexOptions()
_VECTOR = _INDEX.vector
MIB = 1024 * 1024


def backend_check(value: Any) -> str | None:
    """An embedding backend: ``auto``, or a registered one with an optional ``/PRECISION``."""
    try:
        check_backend_name(value)
    except ConfigError as exc:
        return str(exc)
    return None


@dataclass(frozen=True, slots=True)
class IndexTable:
    """How the dataset's index is built (text analysis, vector field, layout, bulk loading) and searched
    lexically; a user ``mapping`` brings its own analysis and fields."""

    analysis: str | None = key(
        affects=RESULTS, choices=lambda: ANALYSIS_CHAINS, doc="analysis chain (default: engine's best)"
    )
    bm25: str = key(
        "es", affects=RESULTS, choices=lambda: BM25_FIELDS, doc="BM25 parameters (r2med: k1=0.9, b=0.4)"
    )
    lexical_field: str = key(
        "combined", affects=RESULTS, choices=lambda: LEXICAL_FIELDS, doc="field the lexical arm searches"
    )
    mapping: Path | None = key(affects=RESULTS, doc="your index-creation body (JSON)")
    field_map: str | None = key(
        affects=RESULTS, doc="where the mapping keeps the corpus: title=F,text=F,vector=F"
    )
    vector_type: str = key(
        _VECTOR.index_type, affects=RESULTS, choices=lambda: VECTOR_INDEX_TYPES, doc="vector index type"
    )
    hnsw_m: int = key(_VECTOR.m, affects=RESULTS, check=between(2, 512), doc="HNSW graph degree")
    hnsw_ef_construction: int = key(
        _VECTOR.ef_construction,
        affects=RESULTS,
        check=between(10, 3200),
        doc="HNSW candidates while building",
    )
    knn_engine: str | None = key(
        affects=RESULTS, choices=lambda: KNN_ENGINES, doc="OpenSearch k-NN engine (default lucene)"
    )
    shards: int = key(
        _INDEX.shards,
        affects=RESULTS,
        check=between(1, 64),
        doc="primary shards (BM25 statistics are per shard)",
    )
    replicas: int | None = key(
        affects=PERFORMANCE,
        check=between(0, 5),
        doc="replicas once loaded (default: the mapping's, else 0 on one node and 1 otherwise)",
    )
    workers: int = key(_INDEX.workers, affects=PERFORMANCE, check=between(1, 32), doc="parallel bulk senders")
    chunk_mb: float = key(
        _INDEX.max_chunk_bytes / MIB,
        affects=PERFORMANCE,
        check=between(0.1, 100),
        doc="bulk request size in MiB",
    )
    max_retries: int = key(
        _INDEX.max_retries,
        affects=PERFORMANCE,
        check=between(0, MAX_RETRIES),
        doc="retries per bulk request (429, 5xx, lost)",
    )

    def check(self) -> None:
        if self.mapping is None:
            if self.field_map is not None:
                raise SettingError(
                    "field_map", "says where {index.mapping} keeps the corpus, so it needs one"
                )
            return
        clash = {
            "{index.analysis}": self.analysis is not None,  # the user's body brings its analysis
            "{index.bm25} " + self.bm25: self.bm25 != "es",  # ... and its similarity (no .r2med sub-fields)
        }
        named = [name for name, on in clash.items() if on]
        if named:
            raise SettingError(
                "mapping",
                f"{self.mapping} brings its own analysis, similarity and vector field: expected no "
                f"{', '.join(named)} with it",
            )

    def options(self, mapping: UserMapping | None, progress: bool) -> IndexOptions:
        """How ``harness index`` and ``harness run`` build the index (``mapping``: index.mapping read)."""
        vector = VectorOptions(self.vector_type, self.hnsw_m, self.hnsw_ef_construction, self.knn_engine)
        return IndexOptions(
            vector=vector,
            analysis=self.analysis,
            workers=self.workers,
            max_chunk_bytes=int(self.chunk_mb * MIB),
            replicas=self.replicas,
            shards=self.shards,
            progress=progress,
            max_retries=self.max_retries,
            mapping=mapping,
        )


@dataclass(frozen=True, slots=True)
class EmbeddingTable:
    """The embedding model of the vector arms, its endpoint, prompts and what computes it."""

    model: str = key("minilm", affects=RESULTS, doc="hub id, folder, short name, openai:MODEL")
    backend: str = key(
        DEFAULT_EMBED_BACKEND,
        affects=RESULTS,
        check=backend_check,
        doc=f"what computes the vectors: {' | '.join(backend_names())}, a backend with an optional /PRECISION",
    )
    url: str | None = key(affects=PERFORMANCE, doc="OpenAI-compatible embeddings endpoint for openai:MODEL")
    key_env: str | None = key(affects=PERFORMANCE, doc="variable holding the endpoint's key")
    query_prompt: str | None = key(affects=RESULTS, empty=True, doc="put before every query")
    document_prompt: str | None = key(affects=RESULTS, empty=True, doc="put before every document")
    trust_remote_code: bool = key(
        False,
        affects=PERFORMANCE,
        doc="let a model run its own Python code, as "
        f"{', '.join(m.hub_id.rsplit('/', 1)[-1] for m in remote_code_models())} need (the manifest records it)",
    )

    def embedder(
        self,
        model: str,
        query_prompt: str | None,
        document_prompt: str | None,
        progress: bool,
        cache: EmbeddingCache | None = None,
    ) -> CachedEmbedder:
        """A cached embedder of ``model`` with this table's endpoint, backend and remote-code consent: the one
        way ``harness index`` and ``harness run`` make one."""
        spec = resolve_model(
            model,
            query_prompt=query_prompt,
            document_prompt=document_prompt,
            trust_remote_code=self.trust_remote_code,
        )
        cache = cache if cache is not None else EmbeddingCache()
        endpoint = endpoint_for([model], self.url, self.key_env)
        encoder = build_encoder(spec, endpoint=endpoint, cache=cache, backend=self.backend, progress=progress)
        return CachedEmbedder(encoder, cache)
