"""Pairs files in the layouts the harness writes and reads (pool.trec, qrels, pool.csv, BEIR TSV)."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import DataError
from harness.judgments.judge import Pair, pairs_from_file, pairs_from_rankings, read_pairs
from indexer import load_dataset

QUERIES = {"1", "3", "5"}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pool.trec", "1 0 d1\n3 0 d2\n\n1 0 d1\n"),
        ("judged.qrels", "1 0 d1 2\n3 0 d2 0\n"),
        ("two.txt", "1 d1\n3 d2\n"),
        ("pool.csv", 'dataset,query_id,query,doc_id,title\nsample,1,"a, b",d1,T\nsample,3,q,d2,T\n'),
        ("beir.tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n3\td2\t0\n"),
    ],
)
def test_each_layout_gives_its_distinct_pairs_in_file_order(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert read_pairs(path, QUERIES) == (Pair("1", "d1"), Pair("3", "d2"))


def test_bad_lines_are_named_at_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.trec"
    path.write_text("1 0 d1\n9 0 d2\n1 0 d3 1 extra\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_pairs(path, QUERIES)
    text = str(caught.value)
    assert "2 bad line(s)" in text and f"{path}:2: query '9' is not a judged query" in text
    assert f"{path}:3: expected QUERY_ID 0 DOC_ID [GRADE]" in text
    header = tmp_path / "h.csv"
    header.write_text("query_id,title\n1,x\n", encoding="utf-8")
    with pytest.raises(DataError, match="expected a header with a query id column"):
        read_pairs(header, QUERIES)
    empty = tmp_path / "e.trec"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="found an empty file"):
        read_pairs(empty, QUERIES)


def test_a_pairs_file_for_a_dataset(gate_data: Path, tmp_path: Path) -> None:
    ds = load_dataset(str(gate_data))
    qid = sorted(ds.qrels)[0]
    doc = next(iter(ds.qrels[qid]))
    path = tmp_path / "p.trec"
    path.write_text(f"{qid} 0 {doc}\n{qid} 0 not-judged\n", encoding="utf-8")
    pairs = pairs_from_file(path, str(gate_data))
    assert (
        pairs.pairs == (Pair(qid, doc), Pair(qid, "not-judged"))
        and pairs.judged == 1
        and pairs.rankings == {}
        and pairs.run_dir is None
    )


def test_a_pool_of_rankings_held_in_memory(gate_data: Path) -> None:
    """What an experiment (its rankings not yet in a run directory) pools: judged pairs kept, by default."""
    ds = load_dataset(str(gate_data))
    q1, q2 = sorted(ds.qrels)[:2]
    rel = next(iter(ds.qrels[q1]))
    rankings = {"a": {q1: [rel, "x", "y"], q2: ["x"]}, "b": {q1: ["y", "z"], "other": ["w"]}}
    pairs = pairs_from_rankings(ds, rankings, depth=2)
    assert pairs.pairs == (Pair(q1, rel), Pair(q1, "y"), Pair(q1, "x"), Pair(q1, "z"), Pair(q2, "x"))
    assert pairs.arms == ("a", "b") and pairs.judged == 1 and "top 2 of a, b" in pairs.source
    unjudged = pairs_from_rankings(ds, rankings, depth=2, unjudged_only=True)
    assert Pair(q1, rel) not in unjudged.pairs and unjudged.judged == 0
