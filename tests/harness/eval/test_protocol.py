"""R2MED's protocol (``eval.protocol = "r2med"``): each of its four rules applied, and the default unchanged.

R2MED's evaluation code (R2MED/R2MED, ``src/``) differs from trec_eval in four places (docs/comparisons.md,
"Scoring protocols", cites each at file:line); each test below fails if its rule is not applied under
``r2med`` or if it leaks into the default (trec_eval's):

1. the mean is over the queries that returned results (trec_eval without ``-c``);
2. a dense (vector) result whose id is the query's id is dropped;
3. BM25 query2doc joins the query's two copies with no space;
4. dense HyDE encodes the generated document without the query prompt.

Rules 1, 3 and 4 are checked without an engine through ``harness score`` and ``harness.expand``; rules 1, 2
and 4, and results.json's record of the protocol, through ``harness run`` against the test session's
Elasticsearch.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.expand import select_expansion
from harness.experiment import EvalTable
from harness.results import RunResults, load_per_query
from indexer.data import load_dataset
from tests._support import R2MED_DEMO, scifact_subset

R2MED = ["--set", "eval.protocol=r2med"]


# -- 1. the mean: harness score --------------------------------------------------------------------------


@pytest.fixture
def three_judged(tmp_path: Path) -> tuple[Path, Path]:
    """Three judged queries; the run answers two: q1's relevant document first (RR 1), q2's second (RR 0.5)."""
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d7 2 1.0 t\nq2 Q0 d9 1 2.0 t\nq2 Q0 d2 2 1.0 t\n")
    return run, qrels


@pytest.mark.parametrize(
    ("extra", "mean", "queries", "said"),
    [
        ([], 0.5, 3, "trec_eval, -c"),  # trec_eval -c: q3 counts as 0, (1 + 0.5 + 0) / 3
        (R2MED, 0.75, 2, "r2med, mean over queries with results"),  # R2MED: (1 + 0.5) / 2
        ([*R2MED, "--set", "eval.complete=true"], 0.5, 3, "r2med, -c"),  # the key wins over the protocol
    ],
    ids=["default", "r2med", "r2med-with-c"],
)
def test_the_mean_is_over_the_queries_with_results_under_r2med(
    three_judged: tuple[Path, Path],
    tmp_path: Path,
    capsys,
    extra: list[str],
    mean: float,
    queries: int,
    said: str,
) -> None:
    run, qrels = three_judged
    out = tmp_path / "scores.json"
    assert main(["score", str(run), "--qrels", str(qrels), "-m", "recip_rank", "-o", str(out), *extra]) == 0
    printed = capsys.readouterr().out
    assert f"scored with {said};" in printed
    assert f"recip_rank            \tall\t{mean:6.4f}" in printed.splitlines()
    scores = json.loads(out.read_text())
    assert scores["settings"] == said
    assert scores["runs"][0]["queries"] == queries
    assert scores["runs"][0]["metrics"]["mrr"] == pytest.approx(mean)


# -- 3 and 4. how expansions are read ---------------------------------------------------------------------

DOC = "Neanderthal bones: phototaxis is an innate orientation response."  # BM25 finds the demo's documents


@pytest.fixture(scope="module")
def expanded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """R2MED's demo with a query2doc and a HyDE set from a plain (not reasoning) model."""
    root = tmp_path_factory.mktemp("expanded") / "protocol-demo"
    shutil.copytree(R2MED_DEMO, root)
    root.chmod(0o755)
    queries = [json.loads(line) for line in (root / "query.jsonl").read_text().splitlines()]
    for method in ("query2doc", "hyde"):
        folder = root / method / "gpt4"
        folder.mkdir(parents=True, exist_ok=True)
        rows = [{**q, "hy_doc": DOC} for q in queries]
        (folder / "query_with_hydoc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


@pytest.mark.parametrize(("name", "join"), [("trec_eval", " "), ("r2med", "")])
def test_query2doc_joins_the_two_copies_with_no_space_under_r2med(
    expanded: Path, name: str, join: str
) -> None:
    dataset = load_dataset(str(expanded))
    expansion = select_expansion(dataset, "query2doc:gpt4", EvalTable(protocol=name).rules)
    for qid, query in dataset.queries.items():
        # R2MED: e["text"]*2+" "+e["hy_doc"] (src/eval_BM25.py line 129)
        assert expansion.lexical_text(qid, query) == f"{query}{join}{query} {DOC}"


@pytest.mark.parametrize(("name", "prompted"), [("trec_eval", True), ("r2med", False)])
def test_hyde_encodes_the_document_without_the_query_prompt_under_r2med(
    expanded: Path, name: str, prompted: bool
) -> None:
    dataset = load_dataset(str(expanded))
    expansion = select_expansion(dataset, "hyde:gpt4", EvalTable(protocol=name).rules)
    for qid, query in dataset.queries.items():
        # the query always with its prompt; the document with it only under trec_eval's protocol
        assert expansion.dense_parts(qid, query) == [(query, True), (DOC, prompted)]
        assert expansion.lexical_text(qid, query) == DOC  # BM25 HyDE: the document alone, either way


def test_the_default_protocol_is_trec_eval_faithful() -> None:
    rules = EvalTable().rules
    assert EvalTable().protocol == "trec_eval" and EvalTable().counts_empty
    assert (rules.complete, rules.drop_query_id, rules.query2doc_join, rules.prompt_expansion) == (
        True,
        False,
        " ",
        True,
    )


# -- 1, 2 and 4 through a run against the engine ------------------------------------------------------------

OKRA = "0000-okra"  # a judged query with no lexical hit


def _ranking(path: Path, qid: str) -> list[str]:
    rows = [line.split() for line in path.read_text().splitlines() if line.split()[0] == qid]
    return [doc for _, _, doc, _, _, _ in sorted(rows, key=lambda r: int(r[3]))]


def _scores(path: Path) -> dict[tuple[str, str], float]:
    return {(r[0], r[2]): float(r[4]) for r in (line.split() for line in path.read_text().splitlines())}


@pytest.fixture(scope="module")
def self_matched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A SciFact cut where a document has a test query's id and text (a self-match), plus "okra"."""
    folder = scifact_subset(tmp_path_factory.mktemp("self") / "self-match", n_docs=120, n_test=10, n_train=2)
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    query = json.loads((folder / "queries.jsonl").read_text().splitlines()[0])
    assert query["_id"] not in {d["_id"] for d in corpus}
    assert not any("okra" in (d["title"] + d["text"]).lower() for d in corpus)
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"_id": query["_id"], "title": "", "text": query["text"]}) + "\n")
    with (folder / "queries.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"_id": OKRA, "text": "okra"}) + "\n")
    with (folder / "qrels" / "test.tsv").open("a", encoding="utf-8") as fh:
        fh.write(f"{OKRA}\t{corpus[0]['_id']}\t1\n")
    return folder, query["_id"]


def _run(es_url: str, dataset: Path, out: Path, *extra: str) -> Path:
    argv = ["run", "hybrid", "--dataset", str(dataset), "--output", str(out), *extra]
    assert main([*argv, "--url", es_url, "--no-progress", "--records", "jsonl"]) == 0
    return out


def test_a_run_under_r2med_drops_dense_self_matches_and_means_over_answered_queries(
    es_url: str, self_matched: tuple[Path, str], tmp_path: Path
) -> None:
    folder, qid = self_matched
    default = _run(es_url, folder, tmp_path / "default")
    r2med = _run(es_url, folder, tmp_path / "r2med", *R2MED)
    runs = {name: out / "runs" / "self-match" for name, out in (("default", default), ("r2med", r2med))}

    # 2. the vector arm's self-match: kept (first) by default, dropped under r2med; BM25 keeps it in both
    assert _ranking(runs["default"] / "vector.trec", qid)[0] == qid
    assert qid not in _ranking(runs["r2med"] / "vector.trec", qid)
    assert _ranking(runs["r2med"] / "vector.trec", qid) == _ranking(runs["default"] / "vector.trec", qid)[1:]
    for name in runs:
        assert _ranking(runs[name] / "lexical.trec", qid)[0] == qid

    # 1. the lexical arm's mean: over the 11 judged queries (okra 0) by default, over the 10 answered under r2med
    for name, out, counted in (("default", default, 11), ("r2med", r2med, 10)):
        arm = RunResults.load(out).datasets["self-match"].arms["lexical"]
        rows = {r.qid: r.metrics["ndcg@10"] for r in load_per_query(out) if r.arm == "lexical"}
        assert arm.queries == 11 and len(rows) == counted, name  # every query searched; those scored
        assert (OKRA in rows) == (name == "default")
        assert arm.metrics["ndcg@10"] == pytest.approx(sum(rows.values()) / counted, abs=1e-6)

    # the paired test of vector against lexical: on every judged query by default, on those both answered
    # under r2med (lexical has no result for okra)
    for out, paired in ((default, 11), (r2med, 10)):
        tests = RunResults.load(out).datasets["self-match"].significance
        assert next(c for c in tests if (c.arm_a, c.arm_b) == ("lexical", "vector")).n_queries == paired

    # the protocol each run was scored with, in results.json and in what the report shows
    for name, out, label in (("trec_eval", default, "trec_eval, -c"), ("r2med", r2med, "r2med, mean over")):
        data = json.loads((out / "results.json").read_text())
        assert data["manifest"]["eval"]["protocol"] == name
        assert RunResults.load(out).manifest.evaluation.label.startswith(label)


def test_a_run_under_r2med_encodes_hydes_document_without_the_query_prompt(
    es_url: str, expanded: Path, tmp_path: Path
) -> None:
    prompt = ["--set", "embedding.query_prompt=query: ", "--expansion", "hyde:gpt4"]
    default = _run(es_url, expanded, tmp_path / "default", *prompt)
    r2med = _run(es_url, expanded, tmp_path / "r2med", *prompt, *R2MED)
    folder = "runs/protocol-demo"
    arms = sorted(p.name for p in (default / folder).glob("*.trec"))
    hyde = next(name for name in arms if name.startswith("vector") and "hyde" in name)
    # the plain vector arm is the same under both (the query keeps its prompt; no self-matches here) ...
    assert _scores(default / folder / "vector.trec") == _scores(r2med / folder / "vector.trec")
    # ... HyDE's vectors differ: its document encoded without the prompt under r2med
    ours, theirs = _scores(default / folder / hyde), _scores(r2med / folder / hyde)
    assert ours.keys() & theirs.keys()
    assert any(abs(ours[k] - theirs[k]) > 1e-6 for k in ours.keys() & theirs.keys())
