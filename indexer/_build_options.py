"""The options of an index build and what a build reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from base import ConfigError
from indexer._layout import VectorOptions, check_analysis
from indexer._user_mapping import UserMapping

WINDOW = 1024


@dataclass(frozen=True, slots=True)
class IndexOptions:
    vector: VectorOptions = field(default_factory=VectorOptions)
    analysis: str | None = None  # english | hunspell | standard; None: the engine's best
    workers: int = 2
    max_chunk_bytes: int = 4 * 1024 * 1024
    replicas: int | None = None  # None: 0 on a one-node cluster, 1 otherwise
    shards: int = 1
    batch_size: int | None = None
    progress: bool = True
    window: int = WINDOW  # documents read, embedded and sent per step
    max_retries: int = 10  # per bulk request (429/5xx/connection errors), with exponential backoff
    #: the user's own index-creation body and field map (``--mapping``); None: the harness's layout
    mapping: UserMapping | None = None

    def __post_init__(self) -> None:
        if self.analysis is not None:
            check_analysis(self.analysis)
            if self.mapping is not None:
                raise ConfigError(
                    f"--analysis {self.analysis} chooses the harness mapping's analysis chain, but "
                    f"--mapping {self.mapping.source} brings its own analysis: expected one of them"
                )


@dataclass(slots=True)
class IndexSummary:
    alias: str
    index: str
    dataset: str
    docs: int
    seconds: float
    created: bool
    analysis: str = ""
    indexed: int = 0
    updated: int = 0
    skipped: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    model_calls: int = 0
    embed_seconds: float = 0.0
    retries: int = 0
    published: bool = False
    mapping_hash: str = ""
    models: dict[str, str] = field(default_factory=dict)  # field -> model id
    #: field -> which vectors it holds, where vectors were shipped for the corpus ("bundled for the sample,
    #: verified", or why they were embedded instead); recorded in the index ``_meta`` too
    vectors: dict[str, str] = field(default_factory=dict)
    #: the fields whose vectors are the ones shipped for the corpus (recorded as ``bundled`` in the ``_meta``)
    bundled: list[str] = field(default_factory=list)

    @property
    def docs_per_s(self) -> float:
        return (self.indexed + self.updated) / self.seconds if self.seconds > 0 else 0.0
