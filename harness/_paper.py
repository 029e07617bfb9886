"""The R2MED paper's published per-dataset scores, shipped as package data (fractions 0-1).

Systems are keyed ``<family>/...`` as in the paper's results folder: ``base retriever/<model>``,
``gar/<method>/<llm>/<retriever>`` and ``reranker/<model>/<first stage>/top_10``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

RESOURCE = "r2med_paper_results.json"
BM25_SYSTEM = "base retriever/bm25"


def _is_bm25(system: str) -> bool:
    return system == BM25_SYSTEM


def _is_dense(system: str) -> bool:
    return system.startswith("base retriever/") and system != BM25_SYSTEM


def _is_gar(system: str) -> bool:
    return system.startswith("gar/")


def _is_reranker(system: str) -> bool:
    return system.startswith("reranker/")


# family name -> membership test; report rows use (label, family).
FAMILIES: dict[str, Callable[[str], bool]] = {
    "bm25": _is_bm25,
    "dense": _is_dense,
    "gar": _is_gar,
    "reranker": _is_reranker,
}
REPORT_ROWS: tuple[tuple[str, str], ...] = (
    ("BM25", "bm25"),
    ("best dense retriever", "dense"),
    ("best generation-augmented", "gar"),
)


@dataclass(frozen=True, slots=True)
class PaperScore:
    label: str
    system: str
    dataset: str
    metric: str
    score: float


@cache
def _results() -> dict[str, Any]:
    text = files("harness").joinpath("resources", RESOURCE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _systems() -> dict[str, dict[str, dict[str, float]]]:
    systems: dict[str, dict[str, dict[str, float]]] = _results()["systems"]
    return systems


def paper_systems() -> list[str]:
    return sorted(_systems())


def paper_datasets() -> list[str]:
    names: set[str] = set()
    for per_dataset in _systems().values():
        names.update(per_dataset)
    return sorted(names)


def paper_dataset_name(dataset: str) -> str | None:
    """``r2med/Biology``, ``R2MED/Biology`` or ``biology`` -> the paper's key ``Biology``; None if not R2MED."""
    bare = dataset.rsplit("/", 1)[-1] if dataset.lower().startswith("r2med/") else dataset
    for name in paper_datasets():
        if name.lower() == bare.lower():
            return name
    return None


def normalise_metric(metric: str) -> str:
    """``ndcg@10`` (ranx) -> ``ndcg_at_10`` (paper); ``recall@100`` -> ``recall_at_100``."""
    return metric.strip().lower().replace("@", "_at_")


def paper_score(system: str, dataset: str, metric: str = "ndcg_at_10") -> float | None:
    """The paper's score for (system, dataset, metric), or None when the paper has none."""
    name = paper_dataset_name(dataset)
    if name is None:
        return None
    value = _systems().get(system, {}).get(name, {}).get(normalise_metric(metric))
    return float(value) if value is not None else None


def best_in_family(dataset: str, family: str, metric: str = "ndcg_at_10") -> PaperScore | None:
    """The best-scoring system of ``family`` (see FAMILIES) on ``dataset``; None if nothing applies."""
    if family not in FAMILIES:
        raise KeyError(f"expected a family among {', '.join(FAMILIES)}, found {family!r}")
    member = FAMILIES[family]
    best: PaperScore | None = None
    for system in paper_systems():
        if not member(system):
            continue
        score = paper_score(system, dataset, metric)
        if score is not None and (best is None or score > best.score):
            best = PaperScore(
                family, system, paper_dataset_name(dataset) or dataset, normalise_metric(metric), score
            )
    return best


def reference_rows(dataset: str, metric: str = "ndcg_at_10") -> list[PaperScore]:
    """Rows "BM25", "best dense retriever", "best generation-augmented" for a report on ``dataset``."""
    rows = []
    for label, family in REPORT_ROWS:
        found = best_in_family(dataset, family, metric)
        if found is not None:
            rows.append(PaperScore(label, found.system, found.dataset, found.metric, found.score))
    return rows


# --------------------------------------------------------------------------- published baselines

BASELINES_RESOURCE = "published_baselines.json"


@dataclass(frozen=True, slots=True)
class PublishedBaseline:
    """A published nDCG@10 (fraction 0-1) to read a run's arms against, with where the figure comes from."""

    label: str  # "BM25": the report's row, and its dashed line
    system: str
    score: float
    source: str  # the citation
    checked: str = ""  # how the figure was checked when it was packaged


@cache
def _baselines() -> dict[str, Any]:
    text = files("harness").joinpath("resources", BASELINES_RESOURCE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def r2med_source() -> str:
    """Where the R2MED paper's figures come from (the packaged results' own note)."""
    return str(_results()["source"])


def _matches(entry: dict[str, Any], name: str, split: str | None, fingerprint: dict[str, str]) -> bool:
    pinned: dict[str, str] = entry.get("fingerprint", {})
    if pinned and all(fingerprint.get(k) == v for k, v in pinned.items()):
        return True
    bare = name.lower().removeprefix("beir/")
    return bare in entry["names"] and (split is None or split == entry["split"])


def published_baselines(
    name: str, split: str | None = None, fingerprint: dict[str, str] | None = None
) -> list[PublishedBaseline]:
    """The packaged BEIR baselines of a dataset (matched by fingerprint, else by name and split) and, for an
    R2MED dataset, the paper's rows (BM25, best dense retriever, best generation-augmented)."""
    data = _baselines()
    found = [
        PublishedBaseline(
            b["label"], b["system"], float(b["score"]), data["sources"][b["source"]], b["checked"]
        )
        for entry in data["datasets"]
        if _matches(entry, name, split, fingerprint or {})
        for b in entry["baselines"]
    ]
    found += [PublishedBaseline(r.label, r.system, r.score, r2med_source()) for r in reference_rows(name)]
    return found
