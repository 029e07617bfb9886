"""A synthetic corpus of R2MED's shape, made from SciFact abstracts recombined (deterministic).

R2MED's own files cannot be downloaded here, so ``bench/scale.py`` (and the GPU
stage, ``bench/scale_gpu.py``) measure on a stand-in of the same shape:

- 8 datasets named as R2MED's, with R2MED's query counts (876 in all; each
  count is confirmed by the paper's precision@1 values in
  ``shared/reference/r2med_paper_results.json``) and document counts that add
  up to about 357K (the per-dataset split is ours: the paper's statistics table
  cannot be checked offline, only the total matters for throughput);
- documents whose lengths are drawn from SciFact's: each takes the word count of
  a random SciFact abstract and is filled with whole sentences drawn from other
  random abstracts (the last one cut), under the title of yet another;
- one query per relevant document: a sentence of that document, reworded by
  dropping a few words, judged relevant (grade 1), so retrieval is non-trivial
  but the scores are no measure of R2MED quality.

Only the standard library and numpy: the GPU stage imports this module on a
machine without the harness's other dependencies.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED_SCIFACT = HERE.parent.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"
PACKAGED_SCIFACT = HERE.parent / "indexer" / "data" / "resources" / "scifact" / "corpus.jsonl.gz"

# (name, queries, documents)
R2MED_SHAPE: tuple[tuple[str, int, int], ...] = (
    ("Biology", 103, 57_359),
    ("Bioinformatics", 77, 47_473),
    ("Medical-Sciences", 88, 34_810),
    ("MedXpertQA-Exam", 97, 61_379),
    ("MedQA-Diag", 118, 56_250),
    ("PMC-Treatment", 150, 28_954),
    ("PMC-Clinical", 114, 60_406),
    ("IIYi-Clinical", 129, 10_449),
)
SEED = 17
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Source:
    titles: list[str]
    sentences: list[list[str]]  # per abstract
    words: np.ndarray  # word count of each abstract (title excluded)


def load_source(path: Path | None = None) -> Source:
    """SciFact's abstracts: the shared copy when present, else the one packaged with the harness."""
    path = path or (SHARED_SCIFACT if SHARED_SCIFACT.is_file() else PACKAGED_SCIFACT)
    opener = gzip.open if path.suffix == ".gz" else open
    titles, sentences, words = [], [], []
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            text = str(row.get("text") or "").strip()
            if not text:
                continue
            titles.append(str(row.get("title") or "").strip())
            sentences.append([s for s in _SENTENCE.split(text) if s])
            words.append(len(text.split()))
    return Source(titles, sentences, np.asarray(words))


def shape(fraction: float = 1.0) -> list[tuple[str, int, int]]:
    """Per dataset (name, queries, documents) for a slice: documents scaled, every query kept."""
    return [(name, queries, max(queries, round(docs * fraction))) for name, queries, docs in R2MED_SHAPE]


def documents(source: Source, dataset: int, n: int) -> Iterator[tuple[str, str, str]]:
    """``(id, title, text)`` for ``n`` documents of dataset number ``dataset``; the first n of any larger n."""
    rng = np.random.default_rng([SEED, dataset])
    count = len(source.titles)
    for i in range(n):
        target = int(source.words[rng.integers(count)])
        title = source.titles[rng.integers(count)]
        parts: list[str] = []
        have = 0
        while have < target:
            pool = source.sentences[rng.integers(count)]
            sentence = pool[rng.integers(len(pool))].split()
            take = sentence[: target - have]
            parts.append(" ".join(take))
            have += len(take)
        yield f"d{dataset}-{i}", title, " ".join(parts)


def query_for(text: str, rng: np.random.Generator) -> str:
    """A sentence of ``text`` with about a fifth of its words dropped (at least 4 words kept)."""
    sentences = [s for s in _SENTENCE.split(text) if len(s.split()) >= 6] or [text]
    words = sentences[rng.integers(len(sentences))].split()
    keep = rng.random(len(words)) > 0.2
    kept = [w for w, k in zip(words, keep, strict=True) if k]
    return " ".join(kept if len(kept) >= 4 else words)


def write_beir(root: Path, fraction: float = 1.0, source: Source | None = None) -> list[Path]:
    """One BEIR folder per dataset under ``root`` (corpus, queries, test qrels); returns the folders.

    Relevant documents are spread over the whole slice (every ``docs // queries``-th document).
    """
    source = source or load_source()
    folders = []
    for number, (name, n_queries, n_docs) in enumerate(shape(fraction)):
        folder = root / name
        (folder / "qrels").mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng([SEED, 1000 + number])
        step = n_docs // n_queries
        with (
            (folder / "corpus.jsonl").open("w", encoding="utf-8") as corpus,
            (folder / "queries.jsonl").open("w", encoding="utf-8") as queries,
            (folder / "qrels" / "test.tsv").open("w") as qrels,
        ):
            qrels.write("query-id\tcorpus-id\tscore\n")
            for i, (doc_id, title, text) in enumerate(documents(source, number, n_docs)):
                corpus.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
                if i % step == 0 and i // step < n_queries:
                    qid = f"q{number}-{i // step}"
                    queries.write(json.dumps({"_id": qid, "text": query_for(text, rng)}) + "\n")
                    qrels.write(f"{qid}\t{doc_id}\t1\n")
        folders.append(folder)
    return folders


def texts(fraction: float = 1.0, source: Source | None = None) -> Iterator[str]:
    """Every document's embedded text (title and body joined, as the harness embeds it), in order."""
    source = source or load_source()
    for number, (_, _, n_docs) in enumerate(shape(fraction)):
        for _, title, text in documents(source, number, n_docs):
            yield f"{title} {text}".strip()
