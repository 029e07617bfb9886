"""The tables of an experiment, one per concern, each a frozen dataclass whose fields are its dotted keys.

Every default of ``harness run`` is written here, once (where a component already owns one, such as the
msearch options or the load phase, the table takes it from that component). Each field's ``metadata``
says how a value is checked (:func:`key`): a range, a set of names, commas allowed for a list. The
builder (:mod:`._build`) reads these declarations, so a key's type, default and check live in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from base import ConfigError
from harness._search import SearchOptions
from harness.ann import DEFAULT_CANDIDATES
from harness.eval import DEFAULT_MEASURES, STAT_TESTS
from harness.judgments import DEFAULT_MODE, MODES
from harness.judgments.sources import DEFAULT_SOURCE, SOURCES, Source
from harness.load import MAX_CLIENTS, LoadOptions
from harness.rerank import DEFAULT_DEPTH as RERANK_DEPTH
from harness.sinks import SINKS
from harness.strategies import LEXICAL_FIELDS
from harness.sweep import ParamGrid
from indexer import (
    ANALYSIS_CHAINS,
    AUTH_KINDS,
    BM25_FIELDS,
    DEFAULT_EMBED_BACKEND,
    SIGV4_SERVICES,
    VECTOR_INDEX_TYPES,
    check_backend_name,
)

MAX_DEPTH = 1000
#: the connection keys that ConnectionSettings takes as they are (verify and config: see ConnectionTable)
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
#: the records value that turns every sink off
NO_RECORDS = "none"
#: where judgments come from, and what each source is (:data:`harness.judgments.sources.SOURCES`)
JUDGMENT_SOURCES: dict[str, str] = {name: kind.doc for name, kind in SOURCES.items()}

_SEARCH = SearchOptions()
_LOAD = LoadOptions(iterations=1)  # (iterations: so that duration keeps its "not given")

#: a check: the value -> what was expected and found, or None when it is fine
Check = Callable[[Any], str | None]


def backend_check(value: Any) -> str | None:
    """An embedding backend: ``auto``, or a registered one with an optional ``/PRECISION``."""
    try:
        check_backend_name(value)
    except ConfigError as exc:
        return str(exc)
    return None


def key(
    default: Any = None,
    *,
    check: Check | None = None,
    choices: Callable[[], Iterable[str]] | None = None,
    commas: bool = False,
    empty: bool = False,
    secret: bool = False,
    doc: str = "",
) -> Any:
    """A dotted key: its default, its check, the names it takes, whether a string lists values with
    commas (``"jsonl,es"``), whether an empty string is a value, whether it is a secret (never shown),
    and one line on what it is."""
    meta = {"check": check, "choices": choices, "commas": commas, "empty": empty, "doc": doc}
    return field(default=default, repr=not secret, metadata=meta)


@dataclass(frozen=True, slots=True)
class Between:
    """A range check: ``low <= value <= high`` (``above``: ``low < value``), of a number or of each in a list.
    Its text (``str``) is the range as the key reference shows it."""

    low: float
    high: float
    above: bool = False

    def __call__(self, value: Any) -> str | None:
        items = value if isinstance(value, tuple) else (value,)
        ok = all((v > self.low if self.above else v >= self.low) and v <= self.high for v in items)
        if ok:
            return None
        if self.above:
            return f"expected more than {self.low:g} and at most {self.high:g}, found {value!r}"
        return f"expected {self.low:g}..{self.high:g}, found {value!r}"

    def __str__(self) -> str:
        return f"above {self.low:g}, up to {self.high:g}" if self.above else f"{self.low:g} to {self.high:g}"


def between(low: float, high: float, *, above: bool = False) -> Check:
    """``low <= value <= high`` (``above``: ``low < value``)."""
    return Between(low, high, above)


def _sinks(value: Any) -> str | None:
    """record sinks (or none)"""
    unknown = sorted(set(value) - set(SINKS) - {NO_RECORDS})
    if unknown:
        return f"expected record sinks among {', '.join(SINKS)} (or {NO_RECORDS}), found {', '.join(unknown)}"
    return None


def _nonempty(value: Any) -> str | None:
    """at least one"""
    return None if value else "expected at least one, found none"


@dataclass(frozen=True, slots=True)
class DataTable:
    """What is evaluated: datasets, or your own queries with their judgments (``queries`` + ``qrels``)."""

    datasets: tuple[str, ...] = key(("r2med",), check=_nonempty, doc="r2med, r2med/<Name>, sample, a folder")
    queries: Path | None = key(doc="your queries (JSONL {_id,text} or TSV id<TAB>text)")
    qrels: Path | None = key(doc="their judgments (TREC qrels, TSV/CSV, Quepid CSV, RRE JSON)")
    split: str | None = key(doc="evaluation split of BEIR-style datasets (default test)")
    revision: str | None = key(doc="hub revision of r2med datasets (default: the pinned commit)")


@dataclass(frozen=True, slots=True)
class ConnectionTable:
    """The cluster the run searches (flags > this table > env > --config > the stack's file > defaults)."""

    url: str | None = key(doc="Elasticsearch or OpenSearch URL")
    cloud_id: str | None = key(doc="Elastic Cloud's Cloud ID (names the URL; use with an API key)")
    auth: str | None = key(
        choices=lambda: AUTH_KINDS, doc="basic | api-key | sigv4 (default: what the credentials imply)"
    )
    username: str | None = key(doc="basic-auth user")
    password: str | None = key(secret=True, doc="basic-auth password")
    api_key: str | None = key(secret=True, doc="encoded API key")
    region: str | None = key(doc="AWS region SigV4 signs for (else AWS_REGION or the AWS configuration's)")
    service: str | None = key(choices=lambda: SIGV4_SERVICES, doc="SigV4 service: es | aoss (Serverless)")
    ca_cert: Path | None = key(doc="PEM CA certificate to trust")
    verify: bool | None = key(doc="verify TLS certificates")
    verify_certs: bool | None = key(doc="old name of connection.verify")
    request_timeout: float | None = key(check=between(0, 3600, above=True), doc="seconds per request")
    config: Path | None = key(doc="TOML file with a [connection] table")

    def settings(self) -> dict[str, Any]:
        """The keys given, as :meth:`indexer.ConnectionSettings.resolve` takes them (None: not given)."""
        verify = self.verify if self.verify is not None else self.verify_certs
        given = {name: getattr(self, name) for name in CONNECTION_KEYS}
        return given | {"verify": verify}


@dataclass(frozen=True, slots=True)
class IndexTable:
    """How the dataset's index is built and searched lexically (a user ``mapping`` brings its own)."""

    analysis: str | None = key(choices=lambda: ANALYSIS_CHAINS, doc="analysis chain (default: engine's best)")
    bm25: str = key("es", choices=lambda: BM25_FIELDS, doc="BM25 parameters (r2med: k1=0.9, b=0.4)")
    lexical_field: str = key("combined", choices=lambda: LEXICAL_FIELDS, doc="field the lexical arm searches")
    mapping: Path | None = key(doc="your index-creation body (JSON)")
    field_map: str | None = key(doc="where the mapping keeps the corpus: title=F,text=F,vector=F")


@dataclass(frozen=True, slots=True)
class EmbeddingTable:
    """The embedding model of the vector arms, its endpoint, prompts and what computes it."""

    model: str = key("minilm", doc="hub id, folder, short name or openai:MODEL")
    backend: str = key(
        DEFAULT_EMBED_BACKEND,
        check=backend_check,
        doc="what computes the vectors: auto, or a backend (torch, onnx, onnx-int8, openvino) with an optional /PRECISION",
    )
    url: str | None = key(doc="OpenAI-compatible embeddings endpoint for openai:MODEL")
    key_env: str | None = key(doc="variable holding the endpoint's key")
    query_prompt: str | None = key(empty=True, doc="put before every query")
    document_prompt: str | None = key(empty=True, doc="put before every document")
    trust_remote_code: bool = key(False, doc="let a model run its own Python code")


@dataclass(frozen=True, slots=True)
class ExpansionTable:
    """Query expansion: every arm again with the dataset's expansion of each query."""

    method: str | None = key(doc="hyde|query2doc|lamer|search-o1|search-r1[:LLM]")


@dataclass(frozen=True, slots=True)
class RerankTable:
    """Re-score an arm's top-k with a cross-encoder or a second embedding model."""

    model: str | None = key(doc="[cross:|bi:]MODEL[@DEPTH]")
    depth: int | None = key(check=between(1, 1000), doc=f"documents re-scored (default {RERANK_DEPTH})")
    arms: tuple[str, ...] = key((), commas=True, doc="arms to rerank (default: the main arm)")


@dataclass(frozen=True, slots=True)
class SweepTable:
    """Held-out tuning: what is chosen (fusion grid, template parameters, the in-engine sum's weights)
    and how queries are held out (``tune_on``)."""

    tune_on: str | None = key(doc="train (a split) or kfold[:K]")
    arm: str | None = key(doc="the fused arm tuned (default: the first)")
    grid: str | None = key(doc="fusion grid: default|weights|rrf or method=..;norm=..;weights=..;k=..")
    params: ParamGrid | None = key(doc="ARM.PARAM = [values]: template parameters swept jointly")


@dataclass(frozen=True, slots=True)
class LoadTable:
    """The load phase after the relevance pass: each arm's queries replayed as single requests."""

    enabled: bool = key(False, doc="run the load phase")
    clients: int = key(_LOAD.clients, check=between(1, MAX_CLIENTS), doc="clients sending at once")
    duration: float | None = key(check=between(0, 3600, above=True), doc="seconds measured per arm")
    iterations: int | None = key(check=between(1, 10_000), doc="passes over the queries per arm")
    target_throughput: float | None = key(check=between(0, 100_000, above=True), doc="requests/s")
    warmup: float = key(_LOAD.warmup_s, check=between(0, 600), doc="seconds of warm-up per arm")
    timeout: float = key(_LOAD.timeout_s, check=between(0, 600, above=True), doc="seconds per request")


@dataclass(frozen=True, slots=True)
class AnnTable:
    """ANN recall of the vector arms, and the sweep of vector index types x candidates."""

    recall: bool = key(True, doc="recall of vector arms against exact search")
    sweep: bool = key(False, doc="sweep index types x candidates")
    index_types: tuple[str, ...] | None = key(
        commas=True, choices=lambda: VECTOR_INDEX_TYPES, doc="e.g. hnsw,int8_hnsw,flat (default: probed)"
    )
    candidates: tuple[int, ...] = key(
        DEFAULT_CANDIDATES,
        commas=True,
        check=between(10, MAX_CANDIDATES),
        doc="candidate counts (k=10 and up)",
    )


@dataclass(frozen=True, slots=True)
class SearchTable:
    """How the arms search: results per query, kNN candidates, and the msearch requests."""

    depth: int = key(100, check=between(10, MAX_DEPTH), doc="results per query")
    num_candidates: int | None = key(
        check=between(1, MAX_CANDIDATES), doc="kNN candidates (default 10 x depth)"
    )
    batch_size: int = key(_SEARCH.batch_size, check=between(1, 1000), doc="searches per msearch request")
    concurrency: int = key(_SEARCH.concurrency, check=between(1, 32), doc="msearch requests in flight")
    timeout: float = key(_SEARCH.timeout_s, check=between(0, 3600, above=True), doc="seconds per request")
    max_retries: int = key(_SEARCH.max_retries, check=between(0, 50), doc="retries per msearch request")

    @property
    def options(self) -> SearchOptions:
        return SearchOptions(self.batch_size, self.concurrency, self.timeout, self.max_retries)


@dataclass(frozen=True, slots=True)
class StatsTable:
    """What is measured and how arms are compared."""

    measures: tuple[str, ...] = key(
        tuple(m.key for m in DEFAULT_MEASURES),
        commas=True,
        check=_nonempty,
        doc="measures scored and shown, e.g. ndcg@10,recall@100,map@100 (the paired tests use ndcg@10)",
    )
    test: str = key("randomization", choices=lambda: STAT_TESTS, doc="paired significance test")
    alpha: float = key(0.05, check=between(0, 1, above=True), doc="significance level")
    seed: int = key(42, doc="seed of the tests, intervals and folds")


@dataclass(frozen=True, slots=True)
class OutputTable:
    """Where results go and how they are shown."""

    dir: Path | None = key(doc="run directory (default runs/<mode>-<config hash>)")
    records: tuple[str, ...] = key(("jsonl", "es"), commas=True, check=_sinks, doc="jsonl,es | jsonl | none")
    records_url: str | None = key(doc="write the records to this cluster instead")
    quiet: bool = key(False, doc="no progress lines")
    wide: bool = key(False, doc="every table in full")

    @property
    def sinks(self) -> tuple[str, ...]:
        return tuple(s for s in self.records if s != NO_RECORDS)


@dataclass(frozen=True, slots=True)
class JudgmentsTable:
    """Where the judgments come from (files, clicks or judge) and how the source's labels meet the dataset's;
    every other ``judgments.*`` key is the chosen source's own (docs/judgments.md lists them), read once by the
    builder into ``spec``."""

    source: str = key(DEFAULT_SOURCE, choices=lambda: SOURCES, doc=" | ".join(SOURCES))
    mode: str = key(
        DEFAULT_MODE, choices=lambda: MODES, doc="the source's labels with the dataset's: merge|fill|replace"
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
    "output": OutputTable,
    "judgments": JudgmentsTable,
}
