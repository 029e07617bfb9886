"""R2MED's published expansion sets, read as R2MED's evaluation reads them (issue 16, part 4).

The files here are shaped like the published ones (the official demo's records, `hy_doc` holding
the raw generation): R1-style text with `</think>`, HuatuoGPT-o1's "## Thinking ... ## Final
Response ...", search-o1 and search-r1 sets. The reasoning trace is split off and never searched
with; it is kept in the records and named in the report. A trap document matches only a word that
appears in the traces: searching with a trace would retrieve it, searching with the answer cannot.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.expand import EXPANSIONS, select_expansion
from indexer import Backend
from indexer.data import load_dataset
from tests._support import R2MED_DEMO

TRAP = "zyxqvortex"
ANSWERS = {
    "0": "Insects fly to light because of phototaxis, an innate orientation response (as in Neanderthal art).",
    "1": "The nasal cycle alternates congestion between the nostrils; Neanderthal noses were larger.",
}
SHAPES = {
    ("hyde", "r1-qwen-32b"): lambda a: (
        f"<think>\nThe user asks something; maybe {TRAP} explains it.\n</think>\n\n{a}"
    ),
    ("query2doc", "r1-qwen-32b"): lambda a: f"<think>\nDraft: {TRAP} {TRAP}.\n</think>\n\n{a}",
    ("hyde", "huatuo-o1-70b"): lambda a: f"## Thinking\n\nConsider {TRAP} first.\n\n## Final Response\n\n{a}",
    ("search-o1", "qwq-32b"): lambda a: f"Okay, {TRAP} could matter; let me search.\n</think>\n\n{a}",
    ("search-r1", "qwen-7b-ins"): lambda a: (
        f"<think>I need {TRAP}.</think><search>{TRAP}</search><information>none</information><answer>{a}</answer>"
    ),
    ("search-o1", "gpt4"): lambda a: a,  # not a reasoning model: used whole
}


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shaped") / "llm-reasoning-demo"
    shutil.copytree(R2MED_DEMO, root)
    root.chmod(0o755)
    corpus = root / "corpus.jsonl"
    corpus.chmod(0o644)
    with corpus.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "trap/trap_0.txt", "text": f"{TRAP} {TRAP} {TRAP}"}) + "\n")
    queries = [json.loads(line) for line in (root / "query.jsonl").read_text().splitlines()]
    for (method, llm), shape in SHAPES.items():
        folder = root / method / llm
        folder.mkdir(parents=True, exist_ok=True)
        rows = [{**q, "hy_doc": shape(ANSWERS[q["id"]])} for q in queries]  # the published records' shape
        (folder / "query_with_hydoc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_methods_include_search_o1_and_search_r1() -> None:
    assert {"hyde", "query2doc", "lamer", "search-o1", "search-r1"} == set(EXPANSIONS)


@pytest.mark.parametrize(("method", "llm"), [k for k in SHAPES if k[1] != "gpt4"])
def test_reasoning_is_split_off_and_only_the_answer_is_searched(shaped: Path, method: str, llm: str) -> None:
    dataset = load_dataset(str(shaped))
    expansion = select_expansion(dataset, f"{method}:{llm}")
    assert expansion.reasoning_format is not None
    for qid, query in dataset.queries.items():
        assert expansion.documents[qid] == ANSWERS[qid]
        assert TRAP in expansion.reasoning[qid]
        assert expansion.lexical_text(qid, query) == ANSWERS[qid], "BM25: the answer alone"
        assert expansion.dense_texts(qid, query) == [query, ANSWERS[qid]], "dense: encoded separately"
    info = expansion.info().reasoning
    assert info.queries_with_trace == len(dataset.queries) and info.no_answer == ()


def test_search_o1_from_a_plain_model_is_used_whole_like_hyde(shaped: Path) -> None:
    dataset = load_dataset(str(shaped))
    expansion = select_expansion(dataset, "search-o1:gpt4")
    assert expansion.reasoning_format is None and not expansion.reasoning
    for qid, query in dataset.queries.items():
        assert expansion.lexical_text(qid, query) == ANSWERS[qid]
        assert expansion.dense_texts(qid, query) == [query, ANSWERS[qid]]


@pytest.mark.parametrize(
    "text",
    [f"<think>\nstill thinking about {TRAP}", f"<think>\nthinking about {TRAP}\n</think>\n\n"],
    ids=["out of tokens before </think>", "finished thinking, no answer"],
)
def test_a_trace_without_an_answer_falls_back_to_the_query(shaped: Path, tmp_path: Path, text: str) -> None:
    root = tmp_path / "unfinished"
    shutil.copytree(shaped, root)
    target = root / "hyde" / "r1-qwen-32b" / "query_with_hydoc.jsonl"
    rows = [{**json.loads(line), "hy_doc": text} for line in target.read_text().splitlines()]
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dataset = load_dataset(str(root))
    expansion = select_expansion(dataset, "hyde:r1-qwen-32b")
    assert expansion.no_answer == tuple(sorted(dataset.queries))
    for qid, query in dataset.queries.items():
        assert TRAP in expansion.reasoning[qid]
        assert expansion.lexical_text(qid, query) == query and expansion.dense_texts(qid, query) == [query]


def test_run_never_searches_with_the_trace_and_reports_it(
    shaped: Path, tmp_path: Path, es_url: str, es_backend: Backend
) -> None:
    out = tmp_path / "run"
    argv = ["run", "lexical", "--dataset", str(shaped), "--expansion", "hyde:r1-qwen-32b", "--url", es_url]
    assert main([*argv, "--output", str(out), "--records", "jsonl", "--no-progress"]) == 0
    run = (out / "runs" / "llm-reasoning-demo" / "lexical+hyde.trec").read_text()
    assert run.strip() and "trap/trap_0.txt" not in run, "the trace was not searched with"

    # control: the raw text (trace included) does retrieve the trap, so the check above can fail
    raw = json.loads((shaped / "hyde" / "r1-qwen-32b" / "query_with_hydoc.jsonl").read_text().splitlines()[0])
    hits = es_backend.search(
        "r2med-llm-reasoning-demo", {"query": {"match": {"title_text": raw["hy_doc"]}}, "size": 10}
    ).hits
    assert "trap/trap_0.txt" in [h.id for h in hits]

    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    expanded = [r for r in records if r["arm"] == "lexical+hyde"]
    assert expanded and all(TRAP in r["query"]["reasoning"] for r in expanded)
    assert all(TRAP not in r["query"]["expansion"] for r in expanded)
    assert all(r["query"]["reasoning"] is None for r in records if r["arm"] == "lexical")
    manifest = json.loads((out / "manifest.json").read_text())
    reasoning = manifest["datasets"]["llm-reasoning-demo"]["expansion"]["reasoning"]
    assert manifest["datasets"]["llm-reasoning-demo"]["revision"] is None, "a folder has no hub revision"
    assert reasoning["format"] == "think-tag" and reasoning["queries_with_trace"] == len(expanded) == 1
    report = (out / "report.md").read_text()
    assert "Reasoning model (think-tag): searched with the text after </think>" in report
    assert main(["report", str(out), "--html"]) == 0
    assert TRAP in (out / "report.html").read_text(), "the HTML drill-down shows the trace"
