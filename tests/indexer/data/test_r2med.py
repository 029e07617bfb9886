"""The R2MED folder layout, on the official demo fixture (with its HyDE expansions)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from indexer.data import load_dataset
from tests._support import R2MED_DEMO


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_demo_fixture_loads_with_hyde_expansions() -> None:
    ds = load_dataset(str(R2MED_DEMO))
    qrels = _records(R2MED_DEMO / "qrels.jsonl")
    expected: dict[str, dict[str, int]] = {}
    for r in qrels:
        expected.setdefault(str(r["q_id"]), {})[str(r["p_id"])] = int(str(r["score"]))
    assert ds.format == "r2med"
    assert ds.split is None
    assert ds.qrels == expected
    corpus = _records(R2MED_DEMO / "corpus.jsonl")
    assert [d.id for d in ds.iter_corpus()] == [r["id"] for r in corpus]
    assert ds.corpus_size == len(corpus)
    hyde = {str(r["id"]): r["hy_doc"] for r in _records(R2MED_DEMO / "hyde/qwen-7b/query_with_hydoc.jsonl")}
    assert list(ds.expansions) == [("hyde", "qwen-7b")]
    assert ds.expansions["hyde", "qwen-7b"] == {qid: hyde[qid] for qid in ds.queries}
    # the demo's corpus excerpt does not hold the judged documents: warned, not silently dropped
    assert {w.code for w in ds.warnings} == {"unknown-document", "unjudged-query"}


def test_trec_qrels_load_like_jsonl_qrels(make_r2med: Callable[..., Path]) -> None:
    as_jsonl = load_dataset(str(make_r2med()))
    folder = make_r2med({"qrels.jsonl": None})
    (folder / "qrels.jsonl").unlink()
    (folder / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 2\n", encoding="utf-8")
    as_trec = load_dataset(str(folder))
    assert as_trec.qrels == as_jsonl.qrels == {"q1": {"d1": 1}, "q2": {"d2": 2}}
    assert as_trec.fingerprint == as_jsonl.fingerprint


def test_titles_are_optional(make_r2med: Callable[..., Path]) -> None:
    folder = make_r2med(
        {
            "corpus.jsonl": '{"id": "d1", "title": "T", "text": "a"}\n{"id": "d2", "text": "b"}\n{"id": "d3", "text": "c"}\n'
        }
    )
    docs = {d.id: d for d in load_dataset(str(folder)).iter_corpus()}
    assert (docs["d1"].title, docs["d2"].title) == ("T", "")
