"""Generation-augmented retrieval, the way R2MED's evaluation code reads its expansion files.

Methods (:data:`EXPANSIONS`, one row each). BM25: HyDE = the generated document alone; query2doc =
the query twice, then the document; LameR = the query, then the document; search-o1 and search-r1
(agentic retrieval with a reasoning model) = the generated text alone. Dense: query2doc = query and
document joined by a separator into one text; the others = query and document encoded separately
and their vectors averaged (then re-normalised, which keeps every ranking of an averaged unit vector
under dot product). Under R2MED's protocol (``eval.protocol = "r2med"``, :data:`harness.eval.PROTOCOLS`)
query2doc's two copies of the query are joined with no space, and a document encoded apart from its
query gets no query prompt, as R2MED's code does.

Reasoning models (:mod:`harness.expand._reasoning`, a table keyed by model family): the trace is split off
and only the answer is searched with. Like R2MED's evaluation, an expansion set from a reasoning
model is then used as HyDE's is, whatever its method: the answer alone for BM25, query and answer
encoded separately for dense retrievers. The traces are kept for the records and the report; a text
whose answer comes out empty (the model never finished thinking) is searched with the query alone,
and counted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from base import ConfigError
from harness._errors import RunError
from harness.eval import DEFAULT_PROTOCOL, PROTOCOLS, Protocol
from harness.expand._reasoning import ReasoningFormat, reasoning_format_for
from harness.results import ExpansionInfo, ReasoningSplit
from indexer import Dataset

DENSE_SEPARATOR = " [SEP] "


@dataclass(frozen=True, slots=True)
class ExpansionMethod:
    name: str
    lexical: Callable[[str, str, str], str]
    """(query, document, what joins repeated copies of the query) -> the text BM25 searches with."""
    dense_joined: bool  # True: one joined text; False: encode separately and average


def _alone(query: str, doc: str, join: str) -> str:
    return doc


EXPANSIONS: dict[str, ExpansionMethod] = {
    "hyde": ExpansionMethod("hyde", _alone, dense_joined=False),
    "query2doc": ExpansionMethod("query2doc", lambda q, d, join: f"{q}{join}{q} {d}", dense_joined=True),
    "lamer": ExpansionMethod("lamer", lambda q, d, join: f"{q} {d}", dense_joined=False),
    "search-o1": ExpansionMethod("search-o1", _alone, dense_joined=False),
    "search-r1": ExpansionMethod("search-r1", _alone, dense_joined=False),
}


@dataclass(frozen=True, slots=True)
class Expansion:
    """One expansion set, ready to search with: ``documents`` are the texts searched (answers only)."""

    method: ExpansionMethod
    llm: str
    documents: Mapping[str, str]  # qid -> the text searched with (reasoning split off)
    reasoning: Mapping[str, str] = field(default_factory=dict)  # qid -> trace (never searched)
    reasoning_format: ReasoningFormat | None = None
    no_answer: tuple[str, ...] = ()  # qids whose answer came out empty: searched with the query alone
    prompt_sha256: tuple[str, ...] = ()
    file: str | None = None
    protocol: Protocol = PROTOCOLS[DEFAULT_PROTOCOL]
    """How the texts are put together (query2doc's copies, the document's prompt): trec_eval's or R2MED's."""

    @property
    def label(self) -> str:
        return f"{self.method.name}:{self.llm}"

    @property
    def content_sha256(self) -> str:
        """Identity of what is searched with: a regenerated set is a different run, never a resumed one."""
        digest = hashlib.sha256(
            f"{self.label}\0{self.reasoning_format.family if self.reasoning_format else ''}".encode()
        )
        for qid in sorted(self.documents):
            digest.update(f"\0{qid}\0{self.documents[qid]}".encode())
        return digest.hexdigest()

    def lexical_text(self, qid: str, query: str) -> str:
        doc = self.documents[qid]
        if not doc.strip():
            return query
        if self.reasoning_format is not None:  # R2MED's reading of reasoning models: the answer alone
            return doc
        return self.method.lexical(query, doc, self.protocol.query2doc_join)

    def dense_texts(self, qid: str, query: str) -> list[str]:
        return [text for text, _ in self.dense_parts(qid, query)]

    def dense_parts(self, qid: str, query: str) -> list[tuple[str, bool]]:
        """The texts encoded for ``qid`` (their vectors averaged), each with whether it gets the query prompt."""
        doc = self.documents[qid]
        if not doc.strip():
            return [(query, True)]
        if self.method.dense_joined and self.reasoning_format is None:
            return [(f"{query}{DENSE_SEPARATOR}{doc}", True)]
        return [(query, True), (doc, self.protocol.prompt_expansion)]

    def info(self) -> ExpansionInfo:
        """Provenance and reasoning figures for the manifest and the report."""
        fmt = self.reasoning_format
        return ExpansionInfo(
            label=self.label,
            method=self.method.name,
            llm=self.llm,
            content_sha256=self.content_sha256,
            queries=len(self.documents),
            file=self.file,
            prompt_sha256=self.prompt_sha256,
            reasoning=ReasoningSplit(
                format=fmt.family if fmt else None,
                rule=fmt.rule if fmt else None,
                queries_with_trace=len(self.reasoning),
                trace_words_mean=_mean_words(self.reasoning.values()),
                answer_words_mean=_mean_words(self.documents.values()),
                no_answer=self.no_answer,
            ),
        )


def _mean_words(texts: Iterable[str]) -> float:
    counts = [len(t.split()) for t in texts]
    return round(sum(counts) / len(counts), 1) if counts else 0.0


def parse_expansion(text: str) -> tuple[str, str | None]:
    method, _, llm = text.partition(":")
    method = method.strip().lower()
    if method not in EXPANSIONS:
        raise ConfigError(
            f"expected an expansion method in {sorted(EXPANSIONS)} (optionally METHOD:LLM), found {text!r}"
        )
    return method, (llm.strip() or None)


def split_reasoning(
    texts: Mapping[str, str], fmt: ReasoningFormat | None, kept: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """(answers, traces): each text split by ``fmt``; ``kept`` traces (stored apart in the file) come first."""
    answers: dict[str, str] = {}
    traces: dict[str, str] = {}
    for qid, text in texts.items():
        trace, answer = fmt.split(text) if fmt is not None else (None, text)
        answers[qid] = answer
        parts = [t for t in (kept.get(qid), trace) if t and t.strip()]
        if parts:
            traces[qid] = "\n\n".join(parts)
    return answers, traces


def _choose_llm(dataset: Dataset, method: str, llm: str | None) -> str:
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
        return available[0][1]
    if (method, llm) not in dataset.expansions:
        raise ConfigError(
            f"dataset {dataset.name} has no {method} expansions from {llm!r}; present: {', '.join(name for _, name in available)}"
        )
    return llm


def select_expansion(dataset: Dataset, text: str, protocol: Protocol | None = None) -> Expansion:
    method, wanted = parse_expansion(text)
    llm = _choose_llm(dataset, method, wanted)
    docs = dataset.expansions[(method, llm)]
    missing = sorted(q for q in dataset.queries if q not in docs)
    if missing:
        raise RunError(
            f"{len(missing)} queries of {dataset.name} have no {method}:{llm} expansion: {', '.join(missing[:50])}"
            + (" …" if len(missing) > 50 else "")
        )
    info = dataset.expansion_info.get((method, llm))
    fmt = reasoning_format_for(llm)
    answers, traces = split_reasoning(docs, fmt, info.reasoning if info else {})
    no_answer = tuple(sorted(q for q, a in answers.items() if not a.strip()))
    return Expansion(
        EXPANSIONS[method],
        llm,
        answers,
        reasoning=traces,
        reasoning_format=fmt,
        no_answer=no_answer,
        prompt_sha256=info.prompt_sha256 if info else (),
        file=info.file if info else None,
        protocol=protocol or PROTOCOLS[DEFAULT_PROTOCOL],
    )


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
