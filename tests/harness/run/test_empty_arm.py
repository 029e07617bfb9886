"""Defect: a hybrid run died when the query that sorts first had no lexical hit ("okra").

The fusion warm-up fused that query alone and ranx refused an arm without any result. Now a query
with no hits in one arm is fused from the other arm alone, counts 0 for the empty arm, and the
dataset runs to the end. Against the real engine, on a SciFact cut with one added query.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.results import RunResults, load_per_query
from tests._support import scifact_subset

OKRA = "0000-okra"


@pytest.fixture(scope="module")
def okra_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = scifact_subset(tmp_path_factory.mktemp("okra") / "okra-subset", n_docs=150, n_test=12, n_train=3)
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    assert not any("okra" in (d["title"] + d["text"]).lower() for d in corpus)
    with (folder / "queries.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"_id": OKRA, "text": "okra"}) + "\n")
    with (folder / "qrels" / "test.tsv").open("a", encoding="utf-8") as fh:
        fh.write(f"{OKRA}\t{corpus[0]['_id']}\t1\n")
    return folder


def _ranking(path: Path, qid: str) -> list[str]:
    rows = [line.split() for line in path.read_text().splitlines() if line.split()[0] == qid]
    return [doc for _, _, doc, _, _, _ in sorted(rows, key=lambda r: int(r[3]))]


@pytest.mark.parametrize("fusion", ["rrf", "wsum:weights=0.5/0.5"])
def test_a_query_without_lexical_hits_is_fused_from_the_vector_arm(
    es_url: str, okra_dir: Path, tmp_path: Path, fusion: str
) -> None:
    out = tmp_path / "run"
    argv = ["run", "hybrid", "--dataset", str(okra_dir), "--fusion", fusion, "--output", str(out)]
    assert main([*argv, "--url", es_url, "--no-progress", "--records", "jsonl"]) == 0
    runs = out / "runs" / "okra-subset"
    assert _ranking(runs / "lexical.trec", OKRA) == []
    vector = _ranking(runs / "vector.trec", OKRA)
    assert vector and _ranking(runs / "hybrid.trec", OKRA) == vector  # fused from the vector arm alone
    assert _ranking(runs / "hybrid-engine-sum.trec", OKRA) == vector  # the engine's sum: kNN alone
    data = RunResults.load(out).datasets["okra-subset"]
    assert data.arms["lexical"].empty_queries == (OKRA,)
    scores = {(r.arm, r.qid): r.metrics["ndcg@10"] for r in load_per_query(out)}
    assert scores[("lexical", OKRA)] == 0.0
    assert data.arms["hybrid"].queries == 13
