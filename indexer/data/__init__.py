"""Datasets: R2MED (hub or folder), BEIR folders and the bundled SciFact sample, validated on every load.

Public surface::

    load_dataset(spec, *, split=None, revision=None) -> Dataset   (r2med/<Name>: pinned commit by default)
    expansion_root(spec) -> Path   (where `harness expand` writes <method>/<llm>/ sets)
    resolve_specs(spec) -> list[str]
    known_datasets() -> list[KnownDataset]
    describe(dataset) -> dict (counts, lengths, grades, expansions, fingerprint, warnings)
    Dataset, Document, Fingerprint, Problem, Severity, R2MED_NAMES
    read_judgments(path, format=None) -> Judgments   TREC qrels, TSV/CSV, Quepid CSV, RRE JSON, LTR list
    write_judgments(path, pairs, format) -> Path      the same formats, out (pairs: RatedPair)
    read_queries(path) -> {qid: text}   JSONL {_id, text} or TSV id<TAB>text
    judged_dataset(name, queries, qrels) -> Dataset   your own queries and judgments (no corpus)
    read_ubi_files(events, queries) / read_ubi_index(backend) -> UbiLog   User Behavior Insights logs
    write_ubi_files(folder, log) / index_ubi(backend, log)                 ... and out
"""

from indexer.data._hub import DATA_DIR_ENV, PINNED_REVISIONS, R2MED_NAMES
from indexer.data._judgments import (
    JUDGMENT_FORMATS,
    JudgedQrels,
    Judgment,
    JudgmentFormat,
    Judgments,
    RatedPair,
    normalise_text,
    rated_pairs,
    read_judgments,
    write_judgments,
)
from indexer.data._model import (
    CorpusStats,
    Dataset,
    Document,
    ExpansionInfo,
    Fingerprint,
    Problem,
    Severity,
)
from indexer.data._overlay import EXPANSIONS_ENV, expansions_home
from indexer.data._queries import QUERY_FORMATS, judged_dataset, read_queries
from indexer.data._r2med import EXPANSION_FILE
from indexer.data._registry import (
    Counts,
    KnownDataset,
    expansion_root,
    known_datasets,
    load_dataset,
    resolve_specs,
)
from indexer.data._summary import describe
from indexer.data._ubi import (
    CLICK,
    EVENTS_INDEX,
    IMPRESSION,
    QUERIES_INDEX,
    EventFilter,
    UbiEvent,
    UbiLog,
    UbiQuery,
    index_ubi,
    read_ubi_files,
    read_ubi_index,
    write_ubi_files,
)

__all__ = [
    "CLICK",
    "DATA_DIR_ENV",
    "EVENTS_INDEX",
    "EXPANSIONS_ENV",
    "EXPANSION_FILE",
    "IMPRESSION",
    "JUDGMENT_FORMATS",
    "PINNED_REVISIONS",
    "QUERIES_INDEX",
    "QUERY_FORMATS",
    "R2MED_NAMES",
    "CorpusStats",
    "Counts",
    "Dataset",
    "Document",
    "EventFilter",
    "ExpansionInfo",
    "Fingerprint",
    "JudgedQrels",
    "Judgment",
    "JudgmentFormat",
    "Judgments",
    "KnownDataset",
    "Problem",
    "RatedPair",
    "Severity",
    "UbiEvent",
    "UbiLog",
    "UbiQuery",
    "describe",
    "expansion_root",
    "expansions_home",
    "index_ubi",
    "judged_dataset",
    "known_datasets",
    "load_dataset",
    "normalise_text",
    "rated_pairs",
    "read_judgments",
    "read_queries",
    "read_ubi_files",
    "read_ubi_index",
    "resolve_specs",
    "write_judgments",
    "write_ubi_files",
]
