"""Your own queries (JSONL or TSV) with your own judgments (any judgments format), as a dataset without a corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError, DataError
from indexer import judged_dataset
from indexer.data import read_queries


def test_jsonl_and_tsv_query_files_read_the_same_queries(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "text": "fever"}\n\n{"_id": "2", "text": "a\\tb"}\n')
    (tmp_path / "q.tsv").write_text("1\tfever\n2\ta\tb\n")
    assert (
        read_queries(tmp_path / "q.jsonl") == read_queries(tmp_path / "q.tsv") == {"1": "fever", "2": "a\tb"}
    )


def test_every_bad_query_line_is_named_at_file_line(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("1\tfever\nno tab here\n1\tagain\n3\t \n")
    with pytest.raises(DataError) as err:
        read_queries(path)
    text = str(err.value)
    assert f"{path}:2: error: expected query id <TAB> query text" in text
    assert f'{path}:3: error: expected unique query ids, found "1" again (first at line 1)' in text
    assert f"{path}:4: error: expected a non-empty query text" in text
    with pytest.raises(ConfigError, match=r"expected a query file ending in \.jsonl, \.tsv, \.txt"):
        (tmp_path / "q.xml").write_text("<q/>")
        read_queries(tmp_path / "q.xml")


def test_a_judged_dataset_keeps_the_judged_queries_and_has_no_corpus(tmp_path: Path) -> None:
    (tmp_path / "q.tsv").write_text("1\tfever\n2\tcough\n3\tunjudged\n")
    (tmp_path / "j.csv").write_text("query_id,doc_id,grade\n1,d1,2\n1,d2,0\n2,d3,1\n")
    ds = judged_dataset("mine", tmp_path / "q.tsv", tmp_path / "j.csv")
    assert ds.queries == {"1": "fever", "2": "cough"} and ds.unjudged_queries == 1
    assert ds.qrels == {"1": {"d1": 2, "d2": 0}, "2": {"d3": 1}}
    assert ds.corpus_size == 0 and list(ds.iter_corpus()) == []
    (tmp_path / "j.trec").write_text("1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n")
    assert judged_dataset("mine", tmp_path / "q.tsv", tmp_path / "j.trec").fingerprint == ds.fingerprint


def test_a_malformed_judgments_line_is_named_at_file_line(tmp_path: Path) -> None:
    (tmp_path / "q.tsv").write_text("1\tfever\n")
    (tmp_path / "j.trec").write_text("1 0 d1 2\n1 0 d2 high\n")
    with pytest.raises(DataError, match=rf"{tmp_path / 'j.trec'}:2: error"):
        judged_dataset("mine", tmp_path / "q.tsv", tmp_path / "j.trec")
