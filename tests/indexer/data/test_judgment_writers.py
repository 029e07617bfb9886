"""Judgments out: every format of the registry writes what it reads (a round trip per format), and
refuses pairs it cannot name; RRE's two ``relevant_documents`` shapes (quepid#928) both read, and a file in
either RRE shape (query groups with per-query documents, Quepid's top-level ``queries[]``) reads back the
same once written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from base import ConfigError, DataError
from indexer import JUDGMENT_FORMATS, RatedPair, read_judgments, write_judgments
from indexer.data import rated_pairs

QUERIES = {"1": "okra and blood sugar", "2": "Does vitamin D, in winter, help?", "10": "=- weird start"}
QRELS = {"1": {"d1": 3, "d2": 0}, "2": {"d5": 2, "d6": 1}, "10": {"d9": 1}}
PAIRS = rated_pairs(QRELS, QUERIES)


def test_every_format_has_a_writer() -> None:
    assert list(JUDGMENT_FORMATS) == ["rre", "quepid", "ltr", "trec", "tsv"]
    assert all(callable(f.render) for f in JUDGMENT_FORMATS.values())


def test_pairs_come_in_numeric_query_order() -> None:
    assert [p.qid for p in PAIRS] == ["1", "1", "2", "2", "10"]
    assert PAIRS[0] == RatedPair("1", "okra and blood sugar", "d1", 3)


@pytest.mark.parametrize("name", list(JUDGMENT_FORMATS))
def test_a_written_file_reads_back_the_same(tmp_path: Path, name: str) -> None:
    path = write_judgments(tmp_path / f"out{JUDGMENT_FORMATS[name].suffix}", PAIRS, name)
    back = read_judgments(path)  # the format recognised from the file, not told
    assert back.format == name
    assert back.qrels(QUERIES).qrels == QRELS
    assert back.qrels(QUERIES).unknown == ()


def test_the_ltr_list_has_the_query_headers_and_lines(tmp_path: Path) -> None:
    text = write_judgments(tmp_path / "j.txt", PAIRS, "ltr").read_text()
    assert "# qid:2: Does vitamin D, in winter, help?\n" in text
    assert "3 qid:1 # d1 okra and blood sugar\n" in text


def test_the_rre_file_is_in_the_per_document_shape(tmp_path: Path) -> None:
    data = json.loads(write_judgments(tmp_path / "r.json", PAIRS, "rre").read_text())
    first = data["query_groups"][0]
    assert first["queries"][0]["placeholders"] == {"$query": "okra and blood sugar"}
    assert first["relevant_documents"] == {"d1": {"gain": 3}, "d2": {"gain": 0}}


def test_quepid_guards_a_formula_start_and_quotes_commas(tmp_path: Path) -> None:
    text = write_judgments(tmp_path / "q.csv", PAIRS, "quepid").read_text()
    assert text.splitlines()[0] == "query,docid,rating"
    assert '"Does vitamin D, in winter, help?",d5,2' in text and " =- weird start,d9,1" in text


@pytest.mark.parametrize(
    ("name", "pairs", "fragment"),
    [
        ("quepid", [RatedPair("1", "", "d1", 1)], "names queries by their text"),
        ("rre", [RatedPair("1", " ", "d1", 1)], "names queries by their text"),
        ("trec", [RatedPair("", "okra", "d1", 1)], "names queries by id"),
        ("trec", [RatedPair("1", "okra", "d 1", 1)], "a document id without spaces"),
        ("ltr", [RatedPair("q1", "okra", "d1", 1)], "wants integer query ids"),
        ("excel", [RatedPair("1", "okra", "d1", 1)], "expected a judgments format among"),
        ("trec", [], "found none"),
    ],
)
def test_a_pair_a_format_cannot_name_is_refused(
    tmp_path: Path, name: str, pairs: list[RatedPair], fragment: str
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        write_judgments(tmp_path / "x", pairs, name)
    assert not (tmp_path / "x").exists()


def test_a_bad_pair_is_refused_when_built() -> None:
    with pytest.raises(ConfigError, match="expected an integer grade"):
        RatedPair("1", "okra", "d1", 1.5)  # type: ignore[arg-type]
    assert RatedPair("1", "okra", "d1", -2).grade == -2  # TREC Web's junk: kept, as trec_eval keeps it


@pytest.mark.parametrize(
    "documents",
    [
        {"1.0": ["l_1559"], "3": ["l_2"]},  # Quepid's export before #928: gain -> documents, gains as floats
        {"l_1559": {"gain": 1.0}, "l_2": {"gain": 3}},  # the per-document form #928 settled on
    ],
)
def test_rre_reads_both_shapes_of_quepid_928(tmp_path: Path, documents: dict[str, object]) -> None:
    data = {"query_groups": [{"name": "okra", "queries": [{"placeholders": {"$query": "okra"}}]}]}
    data["query_groups"][0]["relevant_documents"] = documents
    path = tmp_path / "quepid_rre.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert read_judgments(path).qrels({"7": "okra"}).qrels == {"7": {"l_1559": 1, "l_2": 3}}


def test_ltr_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("# qid:1: okra\n3 qid:1 # d1 okra\nthree qid:1 # d2\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.txt:3: .*expected an integer grade"):
        read_judgments(path)


@pytest.mark.parametrize(
    "data",
    [
        {  # Quepid's RRE export: top-level queries[], each with its documents (grade -> documents)
            "id_field": "id",
            "index": "case",
            "template": "template.json",
            "queries": [
                {"placeholders": {"$query": QUERIES["1"]}, "relevant_documents": {"0": ["d2"], "3": ["d1"]}},
                {"placeholders": {"$query": QUERIES["2"]}, "relevant_documents": {"1": ["d6"], "2": ["d5"]}},
                {"placeholders": {"$query": QUERIES["10"]}, "relevant_documents": {"1": ["d9"]}},
            ],
        },
        {  # per-query documents inside one query group, and a group's own for its one query
            "query_groups": [
                {
                    "name": "all",
                    "queries": [
                        {
                            "placeholders": {"$query": QUERIES["1"]},
                            "relevant_documents": {"d1": {"gain": 3}, "d2": {"gain": 0}},
                        },
                        {
                            "placeholders": {"$query": QUERIES["2"]},
                            "relevant_documents": [{"d5": {"gain": 2}}, {"d6": {"gain": 1}}],
                        },
                    ],
                },
                {
                    "queries": [{"placeholders": {"$query": QUERIES["10"]}}],
                    "relevant_documents": {"d9": {"gain": 1}},
                },
            ]
        },
    ],
    ids=["quepid-queries", "per-query-in-groups"],
)
def test_each_rre_shape_round_trips_through_the_writer(tmp_path: Path, data: dict[str, object]) -> None:
    source = tmp_path / "in.json"
    source.write_text(json.dumps(data, indent=2), encoding="utf-8")
    read = read_judgments(source).qrels(QUERIES)
    assert read.qrels == QRELS and read.unknown == ()
    written = write_judgments(tmp_path / "out.json", rated_pairs(read.qrels, QUERIES), "rre")
    back = read_judgments(written)
    assert back.format == "rre" and back.qrels(QUERIES).qrels == QRELS
