"""The tables of an experiment, one per concern, each a frozen dataclass whose fields are its dotted keys.

Every default of ``harness run`` is written here, once (where a component already owns one, such as the
msearch options or the load phase, the table takes it from that component). Each field's ``metadata``
says how a value is checked (:func:`key`): a range, a set of names, commas allowed for a list. The
builder (:mod:`._build`) reads these declarations, so a key's type, default and check live in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._search import SearchOptions
from harness.ann import DEFAULT_CANDIDATES
from harness.eval import DEFAULT_MEASURES, DEFAULT_PROTOCOL, PROTOCOLS, STAT_TESTS, Protocol, protocol
from harness.experiment._index import EmbeddingTable, IndexTable
from harness.judgments import DEFAULT_MODE, MODES
from harness.judgments.sources import DEFAULT_SOURCE, SOURCES, Source
from harness.keys import MAX_RETRIES, OUTPUT, PERFORMANCE, RESULTS, between, declared, key, nonempty
from harness.load import MAX_CLIENTS, LoadOptions
from harness.rerank import DEFAULT_DEPTH as RERANK_DEPTH
from harness.sinks import SINKS
from harness.sweep import ParamGrid, SweepSpec
from indexer import (
    AUTH_KINDS,
    HYBRID_TECHNIQUES,
    SIGV4_SERVICES,
    VECTOR_INDEX_TYPES,
    ConnectionSettings,
)

MAX_DEPTH = 1000
CONNECTION_KEYS = (
    "url",
    "cloud_id",
    "auth",
    "username",
    "password",
    "api_key",
    "region",
    "service",
    "ca_cert",
    "request_timeout",
)
MAX_CANDIDATES = 10_000
#: the connection key that names the connection file (not a setting of the connection itself)
CONNECTION_FILE = "config"
#: the records value that turns every sink off
NO_RECORDS = "none"
#: where judgments come from, and what each source is (:data:`harness.judgments.sources.SOURCES`)
JUDGMENT_SOURCES: dict[str, str] = {name: kind.doc for name, kind in SOURCES.items()}

_SEARCH = SearchOptions()
_LOAD = LoadOptions(iterations=1)  # (iterations: so that duration keeps its "not given")


def _sinks(value: Any) -> str | None:
    """record sinks (or none)"""
    unknown = sorted(set(value) - set(SINKS) - {NO_RECORDS})
    if unknown:
        return f"expected record sinks among {', '.join(SINKS)} (or {NO_RECORDS}), found {', '.join(unknown)}"
    return None


def _pipelines(value: Any) -> str | None:
    """ARM=PIPELINE pairs"""
    bad = [p for p in value if p.count("=") != 1 or not all(part.strip() for part in p.split("="))]
    if bad:
        return f"expected ARM=PIPELINE (e.g. hybrid-engine-query=my-pipeline), found {bad[0]!r}"
    return None


@dataclass(frozen=True, slots=True)
class DataTable:
    """What is evaluated: datasets, or your own queries with their judgments (``queries`` + ``qrels``)."""

    datasets: tuple[str, ...] = key(
        ("r2med",), affects=RESULTS, check=nonempty, doc="r2med[/Name], sample, a folder"
    )
    queries: Path | None = key(affects=RESULTS, doc="your queries: JSONL {_id,text} or TSV")
    qrels: Path | None = key(affects=RESULTS, doc="their judgments: TREC, CSV, Quepid, RRE")
    split: str | None = key(affects=RESULTS, doc="evaluation split (default test)")
    revision: str | None = key(
        affects=RESULTS, doc="hub revision of r2med datasets (default: the pinned commit)"
    )


@dataclass(frozen=True, slots=True)
class ConnectionTable:
    """The cluster a command talks to: this table (a file's connection table, ``--set connection.KEY=VALUE``,
    ``--url``) over the environment (``ES_URL``, ...), over the connection file (``connection.config``), over
    the local stack's file. Every key is read by name into the connection settings."""

    url: str | None = key(affects=PERFORMANCE, doc="Elasticsearch or OpenSearch URL")
    cloud_id: str | None = key(
        affects=PERFORMANCE, doc="Elastic Cloud's Cloud ID (names the URL; use with an API key)"
    )
    auth: str | None = key(
        affects=PERFORMANCE,
        choices=lambda: AUTH_KINDS,
        doc="basic | api-key | sigv4 (default: what the credentials imply)",
    )
    username: str | None = key(affects=PERFORMANCE, doc="basic-auth user")
    password: str | None = key(affects=PERFORMANCE, secret=True, doc="basic-auth password")
    api_key: str | None = key(affects=PERFORMANCE, secret=True, doc="encoded API key")
    region: str | None = key(
        affects=PERFORMANCE, doc="AWS region SigV4 signs for (else AWS_REGION or the AWS configuration's)"
    )
    service: str | None = key(
        affects=PERFORMANCE, choices=lambda: SIGV4_SERVICES, doc="SigV4 service: es | aoss (Serverless)"
    )
    ca_cert: Path | None = key(affects=PERFORMANCE, doc="PEM CA certificate to trust")
    verify: bool | None = key(affects=PERFORMANCE, doc="verify TLS certificates")
    verify_certs: bool | None = key(affects=PERFORMANCE, doc="old name of connection.verify")
    request_timeout: float | None = key(
        affects=PERFORMANCE, check=between(0, 3600, above=True), doc="seconds per request"
    )
    config: Path | None = key(affects=PERFORMANCE, doc="TOML file with a [connection] table")

    def settings(self, own: bool = False) -> ConnectionSettings:
        """The connection: every key of this table given, by its name (``config`` names the connection file),
        over the environment (not read when ``own``: an experiment file's own ``[connection]``), over that file.
        A key added to this table needs nothing more here."""
        values = {name: getattr(self, name) for name in declared(type(self)) if name != CONNECTION_FILE}
        given = {name: value for name, value in values.items() if value is not None}
        return ConnectionSettings.resolve(given, env={} if own else None, config_file=self.config)


@dataclass(frozen=True, slots=True)
class ExpansionTable:
    """Query expansion: every arm again with the dataset's expansion of each query."""

    method: str | None = key(affects=RESULTS, doc="hyde|query2doc|lamer|search-o1|search-r1[:LLM]")


@dataclass(frozen=True, slots=True)
class RerankTable:
    """Re-score an arm's top-k with a cross-encoder or a second embedding model."""

    model: str | None = key(affects=RESULTS, doc="[cross:|bi:]MODEL[@DEPTH]")
    depth: int | None = key(
        affects=RESULTS, check=between(1, 1000), doc=f"documents re-scored (default {RERANK_DEPTH})"
    )
    arms: tuple[str, ...] = key(
        (), affects=RESULTS, commas=True, doc="arms to rerank (default: the main arm)"
    )


@dataclass(frozen=True, slots=True)
class SweepTable:
    """Held-out tuning: what is chosen (fusion grid, template parameters, the in-engine sum's weights)
    and how queries are held out (``tune_on``)."""

    tune_on: str | None = key(affects=RESULTS, doc="train (a split) or kfold[:K]")
    arm: str | None = key(affects=RESULTS, doc="the fused arm tuned (default: the first)")
    grid: str | None = key(
        affects=RESULTS,
        canonical=lambda text: SweepSpec.parse(text).canonical(),
        doc="fusion grid: default|weights|rrf or method=..;norm=..;weights=..;k=..",
    )
    params: ParamGrid | None = key(
        affects=RESULTS, doc="ARM.PARAM = [values]: template parameters swept jointly"
    )


@dataclass(frozen=True, slots=True)
class LoadTable:
    """The load phase after the relevance pass: each arm's queries replayed as single requests."""

    enabled: bool = key(False, affects=PERFORMANCE, doc="run the load phase")
    clients: int = key(
        _LOAD.clients, affects=PERFORMANCE, check=between(1, MAX_CLIENTS), doc="clients sending at once"
    )
    duration: float | None = key(
        affects=PERFORMANCE, check=between(0, 3600, above=True), doc="seconds measured per arm"
    )
    iterations: int | None = key(
        affects=PERFORMANCE, check=between(1, 10_000), doc="passes over the queries per arm"
    )
    target_throughput: float | None = key(
        affects=PERFORMANCE, check=between(0, 100_000, above=True), doc="requests/s"
    )
    warmup: float = key(
        _LOAD.warmup_s, affects=PERFORMANCE, check=between(0, 600), doc="seconds of warm-up per arm"
    )
    timeout: float = key(
        _LOAD.timeout_s, affects=PERFORMANCE, check=between(0, 600, above=True), doc="seconds per request"
    )


@dataclass(frozen=True, slots=True)
class AnnTable:
    """ANN recall of the vector arms, and the sweep of vector index types x candidates."""

    recall: bool = key(True, affects=PERFORMANCE, doc="recall of vector arms against exact search")
    sweep: bool = key(False, affects=PERFORMANCE, doc="sweep index types x candidates")
    index_types: tuple[str, ...] | None = key(
        affects=PERFORMANCE,
        commas=True,
        choices=lambda: VECTOR_INDEX_TYPES,
        doc="e.g. hnsw,int8_hnsw,flat (default: probed)",
    )
    candidates: tuple[int, ...] = key(
        DEFAULT_CANDIDATES,
        affects=PERFORMANCE,
        commas=True,
        check=between(10, MAX_CANDIDATES),
        doc="candidate counts (k=10 and up)",
    )


@dataclass(frozen=True, slots=True)
class SearchTable:
    """How the arms search: results per query, kNN candidates, and the msearch requests."""

    depth: int = key(100, affects=RESULTS, check=between(10, MAX_DEPTH), doc="results per query")
    num_candidates: int | None = key(
        affects=RESULTS, check=between(1, MAX_CANDIDATES), doc="kNN candidates (default 10 x depth)"
    )
    batch_size: int = key(
        _SEARCH.batch_size, affects=PERFORMANCE, check=between(1, 1000), doc="searches per msearch request"
    )
    concurrency: int = key(
        _SEARCH.concurrency, affects=PERFORMANCE, check=between(1, 32), doc="msearch requests in flight"
    )
    timeout: float = key(
        _SEARCH.timeout_s, affects=PERFORMANCE, check=between(0, 3600, above=True), doc="seconds per request"
    )
    max_retries: int = key(
        _SEARCH.max_retries,
        affects=PERFORMANCE,
        check=between(0, MAX_RETRIES),
        doc="retries per msearch request",
    )
    hybrid_technique: str = key(
        "min_max",
        affects=RESULTS,
        choices=lambda: HYBRID_TECHNIQUES,
        doc="OpenSearch hybrid query: min_max, l2 or z_score normalization, or rrf (the harness's own pipeline)",
    )
    pipelines: tuple[str, ...] = key(
        (),
        affects=RESULTS,
        commas=True,
        check=_pipelines,
        doc="ARM=PIPELINE: an OpenSearch search pipeline for a built-in arm",
    )

    @property
    def pipeline_of(self) -> dict[str, str]:
        """Built-in arm -> the search pipeline it names."""
        return dict(p.split("=", 1) for p in self.pipelines)

    @property
    def options(self) -> SearchOptions:
        return SearchOptions(self.batch_size, self.concurrency, self.timeout, self.max_retries)


@dataclass(frozen=True, slots=True)
class StatsTable:
    """What is measured and how arms are compared."""

    measures: tuple[str, ...] = key(
        tuple(m.key for m in DEFAULT_MEASURES),
        affects=RESULTS,
        commas=True,
        check=nonempty,
        doc="measures scored and shown, e.g. ndcg@10,recall@100,map@100 (the paired tests use ndcg@10)",
    )
    test: str = key(
        "randomization", affects=RESULTS, choices=lambda: STAT_TESTS, doc="paired significance test"
    )
    alpha: float = key(0.05, affects=RESULTS, check=between(0, 1, above=True), doc="significance level")
    seed: int = key(42, affects=RESULTS, doc="seed of the tests, intervals and folds")


@dataclass(frozen=True, slots=True)
class EvalTable:
    """How runs are scored: trec_eval's relevance level, and the protocol (trec_eval's, or R2MED's code's)."""

    relevance_level: int = key(
        1,
        affects=RESULTS,
        check=between(1, 100),
        doc="lowest grade binary measures (P, Recall, MAP, MRR) count, trec_eval -l",
    )
    protocol: str = key(
        DEFAULT_PROTOCOL, affects=RESULTS, choices=lambda: PROTOCOLS, doc=" | ".join(PROTOCOLS)
    )
    complete: bool | None = key(
        affects=RESULTS,
        doc="trec_eval -c: judged queries without results count as 0 (default: the protocol's)",
    )
    judged_only: bool = key(
        False, affects=RESULTS, doc="nDCG scored judged-only, trec_eval -J (harness score)"
    )

    @property
    def rules(self) -> Protocol:
        return protocol(self.protocol)

    @property
    def counts_empty(self) -> bool:
        """Whether judged queries without results count (as 0) in the means: ``complete``, else the protocol's."""
        return self.rules.complete if self.complete is None else self.complete

    @property
    def is_default(self) -> bool:
        return self == EvalTable()


@dataclass(frozen=True, slots=True)
class OutputTable:
    """Where results go and how they are shown."""

    dir: Path | None = key(affects=OUTPUT, doc="run directory (default runs/MODE-HASH)")
    records: tuple[str, ...] = key(
        ("jsonl", "es"), affects=OUTPUT, commas=True, check=_sinks, doc="jsonl,es | jsonl | none"
    )
    records_url: str | None = key(affects=OUTPUT, doc="write the records to this cluster instead")
    quiet: bool = key(False, affects=OUTPUT, doc="no progress lines")
    wide: bool = key(False, affects=OUTPUT, doc="every table in full")

    @property
    def sinks(self) -> tuple[str, ...]:
        return tuple(s for s in self.records if s != NO_RECORDS)


@dataclass(frozen=True, slots=True)
class JudgmentsTable:
    """Where the judgments come from (files, clicks or judge) and how the source's labels meet the dataset's;
    every other ``judgments.*`` key is the chosen source's own (docs/judgments.md lists them), read once by the
    builder into ``spec``."""

    source: str = key(DEFAULT_SOURCE, affects=RESULTS, choices=lambda: SOURCES, doc=" | ".join(SOURCES))
    mode: str = key(
        DEFAULT_MODE,
        affects=RESULTS,
        choices=lambda: MODES,
        doc="how other labels meet the dataset's: merge (theirs win) | fill (where it judges nothing) | replace",
    )
    #: (not a key) the source, built from its keys
    spec: Source = field(default_factory=SOURCES[DEFAULT_SOURCE])


#: the experiment's tables by their key (``search`` -> ``search.depth``, ...), in the order of the docs
TABLES: dict[str, type] = {
    "data": DataTable,
    "connection": ConnectionTable,
    "index": IndexTable,
    "embedding": EmbeddingTable,
    "expansion": ExpansionTable,
    "rerank": RerankTable,
    "sweep": SweepTable,
    "load": LoadTable,
    "ann": AnnTable,
    "search": SearchTable,
    "stats": StatsTable,
    "eval": EvalTable,
    "output": OutputTable,
    "judgments": JudgmentsTable,
}
