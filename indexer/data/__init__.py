"""Datasets: R2MED (hub or folder), BEIR folders and the bundled SciFact sample, validated on every load.

Public surface::

    load_dataset(spec, *, split=None, revision=None) -> Dataset
    resolve_specs(spec) -> list[str]
    known_datasets() -> list[KnownDataset]
    describe(dataset) -> dict (counts, lengths, grades, expansions, fingerprint, warnings)
    Dataset, Document, Fingerprint, Problem, Severity, R2MED_NAMES
"""

from indexer.data._hub import DATA_DIR_ENV, R2MED_NAMES
from indexer.data._model import CorpusStats, Dataset, Document, Fingerprint, Problem, Severity
from indexer.data._registry import Counts, KnownDataset, known_datasets, load_dataset, resolve_specs
from indexer.data._summary import describe

__all__ = [
    "DATA_DIR_ENV",
    "R2MED_NAMES",
    "CorpusStats",
    "Counts",
    "Dataset",
    "Document",
    "Fingerprint",
    "KnownDataset",
    "Problem",
    "Severity",
    "describe",
    "known_datasets",
    "load_dataset",
    "resolve_specs",
]
