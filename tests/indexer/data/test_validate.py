"""Malformed inputs: each must fail with an error naming file:line and saying what was expected/found."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from base import DataError
from indexer.data import Severity, load_dataset

Maker = Callable[..., Path]


def _lines(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


D1 = {"id": "d1", "text": "alpha helix"}
D2 = {"id": "d2", "text": "beta sheet"}
Q1 = {"id": "q1", "text": "what is alpha"}
Q2 = {"id": "q2", "text": "what is beta"}
J1 = {"q_id": "q1", "p_id": "d1", "score": 1}
H1 = {"id": "q1", "text": "what is alpha", "hy_doc": "alpha is a helix"}
HYDE = "hyde/m1/query_with_hydoc.jsonl"

# (case id, overrides, code, location, fragment of the message)
R2MED_CASES = [
    ("malformed-json", {"corpus.jsonl": _lines(D1, D2, '{"id": "d3", "text": ')}, "malformed-json",
     "corpus.jsonl:3", "expected one JSON object per line, found malformed JSON"),
    ("not-an-object", {"corpus.jsonl": _lines("[1, 2]", D2)}, "not-an-object",
     "corpus.jsonl:1", "expected a JSON object, found an array"),
    ("missing-id", {"corpus.jsonl": _lines(D1, {"text": "no id"})}, "missing-id",
     "corpus.jsonl:2", 'expected a string field "id", found no such field'),
    ("non-string-id", {"query.jsonl": _lines(Q1, {"id": ["q2"], "text": "x"})}, "bad-id",
     "query.jsonl:2", 'expected a string "id", found an array'),
    ("missing-text", {"query.jsonl": _lines({"id": "q1"}, Q2)}, "missing-text",
     "query.jsonl:1", 'expected a string field "text", found no such field'),
    ("non-string-text", {"corpus.jsonl": _lines(D1, {"id": "d2", "text": 42})}, "bad-text",
     "corpus.jsonl:2", 'expected a string "text", found a number'),
    ("duplicate-doc-id", {"corpus.jsonl": _lines(D1, D2, {"id": "d1", "text": "again"})}, "duplicate-id",
     "corpus.jsonl:3", 'expected unique document ids, found "d1" again (first at line 1)'),
    ("duplicate-query-id", {"query.jsonl": _lines(Q1, {"id": "q1", "text": "again"})}, "duplicate-id",
     "query.jsonl:2", 'expected unique query ids, found "q1" again (first at line 1)'),
    ("empty-query-text", {"query.jsonl": _lines(Q1, {"id": "q2", "text": "  "})}, "empty-text",
     "query.jsonl:2", 'expected a non-empty query text for "q2"'),
    ("qrels-unknown-query", {"qrels.jsonl": _lines(J1, {"q_id": "q9", "p_id": "d2", "score": 1})},
     "unknown-query", "qrels.jsonl:2", 'expected every judged query in query.jsonl, found query "q9"'),
    ("non-integer-grade", {"qrels.jsonl": _lines(J1, {"q_id": "q2", "p_id": "d2", "score": 1.5})},
     "non-integer-grade", "qrels.jsonl:2", "expected a non-negative integer grade, found 1.5"),
    ("negative-grade", {"qrels.jsonl": _lines(J1, {"q_id": "q2", "p_id": "d2", "score": -1})},
     "negative-grade", "qrels.jsonl:2", "expected a non-negative integer grade, found -1"),
    ("word-grade", {"qrels.jsonl": _lines(J1, {"q_id": "q2", "p_id": "d2", "score": "high"})},
     "non-integer-grade", "qrels.jsonl:2", 'expected a non-negative integer grade, found "high"'),
    ("boolean-grade", {"qrels.jsonl": _lines({"q_id": "q1", "p_id": "d1", "score": True})},
     "bad-grade", "qrels.jsonl:1", "expected a non-negative integer grade, found a boolean"),
    ("missing-grade", {"qrels.jsonl": _lines(J1, {"q_id": "q2", "p_id": "d2"})},
     "missing-grade", "qrels.jsonl:2", 'expected an integer "score", found no such field'),
    ("conflicting-judgment", {"qrels.jsonl": _lines(J1, {"q_id": "q1", "p_id": "d1", "score": 2})},
     "conflicting-judgment", "qrels.jsonl:2", "graded 2 here and 1 at line 1"),
    ("undecodable-bytes", {"corpus.jsonl": _lines(D1).encode() + b'{"id": "d2", "text": "caf\xe9"}\n'},
     "undecodable-bytes", "corpus.jsonl:2", "expected UTF-8 text, found byte 0xe9"),
    ("empty-file", {"qrels.jsonl": ""}, "empty-file", "qrels.jsonl",
     "expected at least one record, found an empty file"),
    ("blank-only-file", {"corpus.jsonl": "\n\n"}, "empty-file", "corpus.jsonl",
     "expected at least one record, found an empty file"),
    ("trec-wrong-columns", {"qrels.jsonl": None, "qrels.txt": "q1 0 d1 1\nq2 d2 1\n"}, "wrong-column-count",
     "qrels.txt:2", "expected 4 whitespace-separated columns (query-id iteration doc-id grade), found 3"),
    ("trec-non-integer-grade", {"qrels.jsonl": None, "qrels.txt": "q1 0 d1 1\nq2 0 d2 yes\n"},
     "non-integer-grade", "qrels.txt:2", 'expected a non-negative integer grade, found "yes"'),
    ("expansion-unknown-query", {HYDE: _lines(H1, {"id": "q7", "hy_doc": "x"})}, "unknown-query",
     f"{HYDE}:2", 'expected a query id from query.jsonl, found "q7"'),
    ("query-without-expansion", {HYDE: _lines(H1)}, "missing-expansion",
     "query.jsonl:2", f'expected an expansion in {HYDE} for judged query "q2", found none'),
    ("empty-expansion", {HYDE: _lines({"id": "q1", "hy_doc": ""}, {"id": "q2", "hy_doc": "b"})}, "empty-text",
     f"{HYDE}:1", 'expected a non-empty "hy_doc" for "q1"'),
    ("missing-corpus", {"corpus.jsonl": None}, "missing-file", "corpus.jsonl",
     "expected corpus.jsonl in"),
    ("both-qrels", {"qrels.txt": "q1 0 d1 1\n"}, "ambiguous-qrels", "qrels.txt",
     "expected one of qrels.jsonl or qrels.txt, found both"),
]  # fmt: skip


def _assert_problem(exc: DataError, code: str, location: str, fragment: str) -> None:
    matches = [p for p in exc.problems if p.code == code and p.location == location]
    assert matches, f"no {code} at {location} among {[str(p) for p in exc.problems]}"
    assert matches[0].severity is Severity.ERROR
    assert fragment in matches[0].message
    assert f"{location}: error: " in str(exc)


@pytest.mark.parametrize(
    ("overrides", "code", "location", "fragment"),
    [case[1:] for case in R2MED_CASES],
    ids=[case[0] for case in R2MED_CASES],
)
def test_malformed_r2med_input_fails_naming_file_and_line(
    make_r2med: Maker, overrides: dict[str, str | bytes | None], code: str, location: str, fragment: str
) -> None:
    folder = make_r2med(overrides)
    with pytest.raises(DataError) as info:
        load_dataset(str(folder))
    _assert_problem(info.value, code, location, fragment)


BEIR_CASES = [
    ("tsv-wrong-columns", {"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\n"},
     "wrong-column-count", "qrels/test.tsv:3",
     "expected 3 tab-separated columns (query-id, corpus-id, score), found 2"),
    ("tsv-non-integer-grade", {"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t0.5\n"},
     "non-integer-grade", "qrels/test.tsv:2", 'expected a non-negative integer grade, found "0.5"'),
    ("beir-missing-_id", {"corpus.jsonl": _lines({"_id": "d1", "text": "a"}, {"id": "d2", "text": "b"})},
     "missing-id", "corpus.jsonl:2", 'expected a string field "_id", found no such field (fields: id, text)'),
    ("missing-split", {"qrels/test.tsv": None}, "missing-file", "qrels/test.tsv",
     'expected qrels/test.tsv for split "test"'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("overrides", "code", "location", "fragment"),
    [case[1:] for case in BEIR_CASES],
    ids=[case[0] for case in BEIR_CASES],
)
def test_malformed_beir_input_fails_naming_file_and_line(
    make_beir: Maker, overrides: dict[str, str | bytes | None], code: str, location: str, fragment: str
) -> None:
    with pytest.raises(DataError) as info:
        load_dataset(str(make_beir(overrides)))
    _assert_problem(info.value, code, location, fragment)


def test_missing_split_lists_available_splits(make_beir: Maker) -> None:
    with pytest.raises(DataError, match="found splits: train"):
        load_dataset(str(make_beir({"qrels/test.tsv": None})))


def test_every_error_is_reported_not_only_the_first(make_r2med: Maker) -> None:
    folder = make_r2med(
        {
            "corpus.jsonl": _lines(D1, "{oops", {"id": "d1", "text": "dup"}),
            "qrels.jsonl": _lines(J1, {"q_id": "q2", "p_id": "d2", "score": -3}),
        }
    )
    with pytest.raises(DataError) as info:
        load_dataset(str(folder))
    errors = {p.location for p in info.value.problems if p.severity is Severity.ERROR}
    assert {"corpus.jsonl:2", "corpus.jsonl:3", "qrels.jsonl:2"} <= errors
    assert "3 error(s)" in str(info.value) or "4 error(s)" in str(info.value)


WARNING_CASES = [
    ("unjudged-query", {"qrels.jsonl": _lines(J1)}, "unjudged-query", "query.jsonl:2"),
    ("zero-grade", {"qrels.jsonl": _lines(J1, {"q_id": "q2", "p_id": "d2", "score": 0})}, "zero-grade",
     "qrels.jsonl:2"),
    ("unknown-document", {"qrels.jsonl": _lines(J1, {"q_id": "q2", "p_id": "d404", "score": 1})},
     "unknown-document", "qrels.jsonl:2"),
    ("numeric-id", {"corpus.jsonl": _lines(D1, {"id": 7, "text": "seven"})}, "numeric-id", "corpus.jsonl:2"),
    ("blank-line", {"corpus.jsonl": _lines(D1, "", D2)}, "blank-line", "corpus.jsonl:2"),
    ("duplicate-judgment", {"qrels.jsonl": _lines(J1, J1, {"q_id": "q2", "p_id": "d2", "score": 1})},
     "duplicate-judgment", "qrels.jsonl:2"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("overrides", "code", "location"), [c[1:] for c in WARNING_CASES], ids=[c[0] for c in WARNING_CASES]
)
def test_warnings_are_located_counted_and_do_not_stop_the_load(
    make_r2med: Maker, overrides: dict[str, str | bytes | None], code: str, location: str
) -> None:
    ds = load_dataset(str(make_r2med(overrides)))
    found = [w for w in ds.warnings if w.code == code]
    assert [w.location for w in found] == [location]
    assert all(w.severity is Severity.WARNING for w in ds.warnings)
    assert any(line.startswith(f"1 x {code} (first: {location}: expected") for line in ds.warning_summary())


def test_unjudged_query_is_left_out_and_counted(make_r2med: Maker) -> None:
    ds = load_dataset(str(make_r2med({"qrels.jsonl": _lines(J1)})))
    assert ds.queries == {"q1": "what is alpha"}
    assert ds.unjudged_queries == 1
    assert ds.expansions == {("hyde", "m1"): {"q1": "alpha is a helix"}}
