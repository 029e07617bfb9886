"""The judgments import: TREC qrels, TSV/CSV, Quepid's CSV export and RRE's ratings JSON (one module each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from base import ConfigError, DataError
from indexer import JUDGMENT_FORMATS, read_judgments

QUERIES = {"q1": "okra and blood sugar", "q2": "Does vitamin D, in winter, help?", "q3": "=- weird start"}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_registry_has_one_module_per_format() -> None:
    assert list(JUDGMENT_FORMATS) == ["rre", "quepid", "ltr", "trec", "tsv"]


def test_trec_qrels_and_pool_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "extra.qrels", "q1 0 d1 2\nq1 Q0 d2 0\n\nq2 0 d9\n")
    got = read_judgments(path)
    assert got.format == "trec" and got.ungraded == 1 and not got.by_text
    assert got.qrels().qrels == {"q1": {"d1": 2, "d2": 0}}
    assert len(got.sha256) == 64


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("beir.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td3\t1\n"),
        ("plain.tsv", "q1\td1\t2\nq2\td3\t1\n"),
        (
            "sheet.csv",
            'dataset,query_id,query,doc_id,title,text,rating\ns,q1,x,d1,T,"a, b\nc",2\ns,q2,y,d3,,,1\ns,q2,y,d4,,,\n',
        ),
    ],
)
def test_tsv_and_csv_by_header_or_position(tmp_path: Path, name: str, text: str) -> None:
    got = read_judgments(write(tmp_path, name, text))
    assert got.format == "tsv"
    assert got.qrels().qrels == {"q1": {"d1": 2}, "q2": {"d3": 1}}
    assert got.ungraded == (1 if name == "sheet.csv" else 0)


def test_quepid_export_names_queries_by_text(tmp_path: Path) -> None:
    text = (
        "query,docid,rating\n"
        "okra and blood sugar,d1,3\n"
        '"Does vitamin D,  in winter, help?",d2,1\n'
        " =- weird start,d3,0\n"  # Quepid's formula guard: a leading space
        "a query nobody asked,,\n"  # a query without ratings
        "okra and blood sugar,d7,\n"  # not rated yet
    )
    got = read_judgments(write(tmp_path, "case_12_judgements.csv", text))
    assert got.format == "quepid" and got.by_text and got.ungraded == 1
    mapped = got.qrels(QUERIES)
    assert mapped.qrels == {"q1": {"d1": 3}, "q2": {"d2": 1}, "q3": {"d3": 0}}
    assert mapped.unknown == ()
    with pytest.raises(ConfigError, match="names its queries by their text"):
        got.qrels()


def test_quepid_detailed_export(tmp_path: Path) -> None:
    text = "Team Name,Case Name,Case ID,Query Text,Doc ID,Title,Rating,body\nt,c,1,okra and blood sugar,d1,x,2,y\n"
    got = read_judgments(write(tmp_path, "detailed.csv", text))
    assert got.format == "quepid" and got.qrels(QUERIES).qrels == {"q1": {"d1": 2}}


def test_rre_ratings_in_every_shape(tmp_path: Path) -> None:
    data = {
        "index": "scifact",
        "id_field": "id",
        "topics": [
            {
                "description": "t",
                "query_groups": [
                    {
                        "name": "okra",
                        "queries": [
                            {"template": "q.json", "placeholders": {"$query": "okra and blood sugar"}}
                        ],
                        "relevant_documents": {"d1": {"gain": 3}, "d2": {"rating": 1}},
                    }
                ],
            }
        ],
        "query_groups": [
            {
                "name": "vitamin",
                "queries": [
                    {"template": "q.json", "placeholders": {"$query": "Does vitamin D, in winter, help?"}}
                ],
                "relevant_documents": {"2": ["d5", "d6"], "0": ["d7"]},
            },
            {
                "name": "odd",
                "queries": [{"placeholders": {"$q": "a query nobody asked"}}],
                "relevant_documents": [{"d9": {"gain": 2}}],
            },
        ],
    }
    got = read_judgments(write(tmp_path, "ratings.json", json.dumps(data, indent=2)))
    assert got.format == "rre"
    mapped = got.qrels(QUERIES)
    assert mapped.qrels == {"q1": {"d1": 3, "d2": 1}, "q2": {"d5": 2, "d6": 2, "d7": 0}}
    assert [j.doc_id for j in mapped.unknown] == ["d9"]
    assert "1 judgment(s) for 1 query not in the dataset" in mapped.unknown_summary("ratings.json")


@pytest.mark.parametrize(
    ("name", "text", "where", "fragment"),
    [
        ("bad.qrels", "q1 0 d1 1\nq1 0 d2 high\n", ":2:", 'expected an integer grade, found "high"'),
        ("bad.qrels", "q1 0 d1 1\nq1 d2\n", ":2:", "expected 4 whitespace-separated columns"),
        ("bad.tsv", "q1\td1\t1\nq1\td2\t1.5\n", ":2:", "expected an integer grade, found 1.5"),
        ("bad.csv", "qid,doc,grade\nq1,d1,1\n", ":1:", "expected a header naming a query id"),
        ("dup.qrels", "q1 0 d1 1\nq2 0 d1 0\nq1 0 d1 2\n", ":3:", "graded 2 here and 1 at line 1"),
        ("q.csv", "query,docid,rating\nokra,d1,1\nokra,d2,lots\n", ":3:", 'found "lots"'),
        (
            "r.json",
            '{\n "query_groups": [\n  {"queries": [{"placeholders": {"$query": "okra"}}],\n   "relevant_documents": {\n    "d1": {"gain": "x"}}}]}',
            ":5:",
            "expected an integer gain",
        ),
        ("r.json", '{"query_groups": [\n  {"queries": [],', ":2:", "expected RRE ratings JSON"),
        ("empty.tsv", "q1\td1\t\n", "", "expected at least one graded judgment"),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, name: str, text: str, where: str, fragment: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(DataError) as info:
        read_judgments(path)
    message = str(info.value)
    assert fragment in message and f"{path.name}{where}" in message.replace(str(tmp_path) + "/", ""), message


def test_format_by_name_and_unknown_names(tmp_path: Path) -> None:
    path = write(tmp_path, "x.txt", "q1 0 d1 1\n")
    assert read_judgments(path, "trec").format == "trec"
    with pytest.raises(ConfigError, match="expected a judgments format among rre, quepid, ltr, trec, tsv"):
        read_judgments(path, "excel")
    with pytest.raises(ConfigError, match="no file at"):
        read_judgments(tmp_path / "missing.qrels")


def test_a_text_shared_by_two_queries_is_ambiguous(tmp_path: Path) -> None:
    got = read_judgments(write(tmp_path, "q.csv", "query,docid,rating\nsame text,d1,1\n"))
    with pytest.raises(DataError, match="belong to several queries"):
        got.qrels({"a": "same  text", "b": "same text"})


def test_trec_qrels_as_trec_eval_reads_them(tmp_path):
    # a comment first (the format is still recognised), comments between, negative grades kept
    path = tmp_path / "web.qrels"
    path.write_text(
        "# TREC Web 2012 style\n301 0 d1 2\n# judged later\n301 0 d2 -2\n302 0 d3 -1\n302 0 d4 0\n"
    )
    judgments = read_judgments(path)
    assert judgments.format == "trec"
    assert judgments.qrels().qrels == {"301": {"d1": 2, "d2": -2}, "302": {"d3": -1, "d4": 0}}


def test_quepids_rre_export_has_queries_at_the_top(tmp_path: Path) -> None:
    # Quepid's RRE export: no topics or query groups, a top-level queries[] each with its documents
    text = """{
  "id_field": "id",
  "index": "case 12",
  "template": "template.json",
  "queries": [
    {"placeholders": {"$query": "okra and blood sugar"},
     "relevant_documents": {"0": ["d2"], "3": ["d1", "d4"]}},
    {"placeholders": {"$query": "Does vitamin D, in winter, help?"},
     "relevant_documents": {"d5": {"gain": 2}}},
    {"placeholders": {"$query": "=- weird start"}, "relevant_documents": {}},
    {"placeholders": {"$query": "a query nobody asked"},
     "relevant_documents": {"1": ["d9"]}}
  ]
}"""
    got = read_judgments(write(tmp_path, "case_12_rre.json", text))
    assert got.format == "rre" and got.by_text
    mapped = got.qrels(QUERIES)
    assert mapped.qrels == {"q1": {"d2": 0, "d1": 3, "d4": 3}, "q2": {"d5": 2}}
    assert [(j.doc_id, j.line) for j in mapped.unknown] == [("d9", 12)]


def test_a_query_inside_a_group_is_judged_by_its_own_documents(tmp_path: Path) -> None:
    data = {
        "query_groups": [
            {
                "name": "okra",
                "queries": [
                    {
                        "placeholders": {"$query": "okra and blood sugar"},
                        "relevant_documents": {"d3": {"gain": 1}},
                    },
                    {"placeholders": {"$query": "=- weird start"}, "relevant_documents": {"2": ["d8"]}},
                ],
                "relevant_documents": {"d1": {"gain": 3}},
            },
            {  # no group documents: only the query's own
                "name": "vitamin",
                "queries": [
                    {
                        "placeholders": {"$query": "Does vitamin D, in winter, help?"},
                        "relevant_documents": [{"d5": {"gain": 2}}],
                    }
                ],
            },
        ]
    }
    got = read_judgments(write(tmp_path, "groups.json", json.dumps(data, indent=1)))
    assert got.qrels(QUERIES).qrels == {
        "q1": {"d1": 3, "d3": 1},  # the group's document and the query's own
        "q3": {"d1": 3, "d8": 2},
        "q2": {"d5": 2},
    }


@pytest.mark.parametrize(
    ("text", "where", "fragment"),
    [
        (
            '{"id_field": "id",\n "index": "x"}',
            ":1:",
            "expected RRE ratings with topics[].query_groups, query_groups or queries (Quepid's export), "
            "found keys id_field, index",
        ),
        ('{"queries": {"$query": "okra"}}', ":1:", "expected queries to be a list, found an object"),
        (
            '{"queries": [\n {"relevant_documents": {"1": ["d1"]}}]}',
            ":2:",
            "expected a query with placeholders",
        ),
        (
            '{"query_groups": [{"queries": [{"placeholders": {"$query": "okra"}}]}],\n'
            ' "queries": [{"placeholders": {"$query": "okra"},\n  "relevant_documents": {"d1": {"gain": "high"}}}]}',
            ":3:",
            "expected an integer gain, found 'high'",
        ),
        (
            '{"query_groups": [{"queries": [\n {"placeholders": {"$query": "okra"},\n'
            '  "relevant_documents": {"d1": {"gain": 2}}}],\n "relevant_documents": {"d1": {"gain": 1}}}]}',
            ":3:",  # the query's own grade conflicts with its group's
            "graded 2 here and 1 at line 4",
        ),
    ],
)
def test_rre_shapes_errors_name_file_line_and_what_was_found(
    tmp_path: Path, text: str, where: str, fragment: str
) -> None:
    path = write(tmp_path, "r.json", text)
    with pytest.raises(DataError) as info:
        read_judgments(path)
    message = str(info.value)
    assert fragment in message and f"r.json{where}" in message, message
