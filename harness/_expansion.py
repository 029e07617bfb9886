"""Generation-augmented retrieval, the way R2MED built it.

BM25: HyDE = the generated document alone; query2doc = the query twice, then
the document; LameR = the query, then the document. Dense: query2doc = query
and document joined by a separator into one text; HyDE and LameR = query and
document encoded separately and their vectors averaged (then re-normalised,
which keeps every ranking of an averaged unit vector under dot product).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from harness._errors import RunError
from indexer import ConfigError, Dataset

DENSE_SEPARATOR = " [SEP] "


@dataclass(frozen=True, slots=True)
class ExpansionMethod:
    name: str
    lexical: Callable[[str, str], str]
    dense_joined: bool  # True: one joined text; False: encode separately and average


EXPANSIONS: dict[str, ExpansionMethod] = {
    "hyde": ExpansionMethod("hyde", lambda q, d: d, dense_joined=False),
    "query2doc": ExpansionMethod("query2doc", lambda q, d: f"{q} {q} {d}", dense_joined=True),
    "lamer": ExpansionMethod("lamer", lambda q, d: f"{q} {d}", dense_joined=False),
}


@dataclass(frozen=True, slots=True)
class Expansion:
    method: ExpansionMethod
    llm: str
    documents: Mapping[str, str]  # qid -> generated text

    @property
    def label(self) -> str:
        return f"{self.method.name}:{self.llm}"

    def lexical_text(self, qid: str, query: str) -> str:
        return self.method.lexical(query, self.documents[qid])

    def dense_texts(self, qid: str, query: str) -> list[str]:
        doc = self.documents[qid]
        return [f"{query}{DENSE_SEPARATOR}{doc}"] if self.method.dense_joined else [query, doc]


def parse_expansion(text: str) -> tuple[str, str | None]:
    method, _, llm = text.partition(":")
    method = method.strip().lower()
    if method not in EXPANSIONS:
        raise ConfigError(
            f"expected an expansion method in {sorted(EXPANSIONS)} (optionally METHOD:LLM), found {text!r}"
        )
    return method, (llm.strip() or None)


def select_expansion(dataset: Dataset, text: str) -> Expansion:
    method, llm = parse_expansion(text)
    available = sorted(m_llm for m_llm in dataset.expansions if m_llm[0] == method)
    if not available:
        present = ", ".join(f"{m}/{name}" for m, name in sorted(dataset.expansions)) or "none"
        raise ConfigError(
            f"dataset {dataset.name} has no {method} expansions (expected {method}/<llm>/query_with_hydoc.jsonl); present: {present}"
        )
    if llm is None:
        if len(available) > 1:
            raise ConfigError(
                f"dataset {dataset.name} has {method} expansions from several LLMs "
                f"({', '.join(name for _, name in available)}): choose one with --expansion {method}:LLM"
            )
        llm = available[0][1]
    if (method, llm) not in dataset.expansions:
        raise ConfigError(
            f"dataset {dataset.name} has no {method} expansions from {llm!r}; present: {', '.join(name for _, name in available)}"
        )
    docs = dataset.expansions[(method, llm)]
    missing = sorted(q for q in dataset.queries if q not in docs)
    if missing:
        raise RunError(
            f"{len(missing)} queries of {dataset.name} have no {method}:{llm} expansion: {', '.join(missing[:50])}"
            + (" …" if len(missing) > 50 else "")
        )
    return Expansion(EXPANSIONS[method], llm, docs)


def combine_dense(vectors: np.ndarray, groups: list[int]) -> np.ndarray:
    """Average consecutive rows in groups of the given sizes and re-normalise each mean."""
    out = []
    start = 0
    for size in groups:
        mean = vectors[start : start + size].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        out.append(mean / norm if norm > 0 else mean)
        start += size
    return np.stack(out).astype(np.float32)
