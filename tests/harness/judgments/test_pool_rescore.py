"""``harness pool`` and ``harness rescore`` on a real run directory (tests/harness/conftest.py).

The round trip: the unjudged pairs of the hybrid arm's top 10 are written, judged here (the
document each query's hybrid ranking puts highest among them is called relevant, the rest not),
read back in each of the three files the pool writes, and the run is re-scored from its TREC
files. The re-scored figures are checked against ir_measures (pytrec_eval) on the merged
judgments: hybrid's top 10 is then fully judged and its nDCG@10 can only rise.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import ir_measures
import pytest

from base import DataError
from harness.cli import main
from harness.judgments import RunData, pool_dataset
from harness.results import RunResults, load_per_query, load_ranking, trec_path
from indexer import load_dataset, read_judgments
from tests.harness.cli.old_names import deprecated, line
from tests.harness.conftest import GATE_DATASET


def sheet_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def reference(qrels: dict[str, dict[str, int]], ranking: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    measures = {
        "ndcg@10": ir_measures.nDCG @ 10,
        "ndcg_judged@10": ir_measures.parse_measure("nDCG(judged_only=True)@10"),
    }
    qrels_list = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    run = [ir_measures.ScoredDoc(q, d, float(-r)) for q, docs in ranking.items() for r, d in enumerate(docs)]
    out: dict[str, dict[str, float]] = {k: {} for k in measures}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels_list, run):
        key = next(k for k, m in measures.items() if m == metric.measure)
        out[key][metric.query_id] = metric.value
    return out


@pytest.fixture(scope="module")
def pooled(base_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pool")
    assert main(["pool", str(base_run), "--depth", "10", "--arms", "hybrid", "--output", str(out)]) == 0
    return out / GATE_DATASET


def test_the_pool_holds_exactly_the_unjudged_pairs_of_the_top_10(
    base_run: Path, gate_data: Path, pooled: Path
) -> None:
    ds = load_dataset(str(gate_data))
    hybrid = load_ranking(trec_path(base_run, GATE_DATASET, "hybrid"))
    expected = {(q, d) for q in ds.qrels for d in hybrid[q][:10] if d not in ds.qrels[q]}
    rows = sheet_rows(pooled / "pool.csv")
    assert {(r["query_id"], r["doc_id"]) for r in rows} == expected and len(rows) == len(expected)
    corpus = {d.id: d for d in ds.iter_corpus()}
    for r in rows:
        assert r["query"] == ds.queries[r["query_id"]] and r["rating"] == "" and r["arms"] == "hybrid"
        assert (r["title"], r["text"]) == (corpus[r["doc_id"]].title, corpus[r["doc_id"]].text)
        assert hybrid[r["query_id"]].index(r["doc_id"]) + 1 == int(r["best_rank"])
    quepid = (pooled / "quepid.csv").read_text(encoding="utf-8").splitlines()
    assert quepid[0] == "query,docid,rating" and len(quepid) == len(rows) + 1
    trec = (pooled / "pool.trec").read_text().splitlines()
    assert trec == [f"{r['query_id']} 0 {r['doc_id']}" for r in rows]
    # nothing judged yet: the files say so, rather than scoring with no judgment
    for name in ("pool.csv", "quepid.csv", "pool.trec"):
        with pytest.raises(DataError, match=f"found {len(rows)} rows without a grade yet"):
            read_judgments(pooled / name)


def _judge(rows: list[dict[str, str]]) -> dict[tuple[str, str], int]:
    """The test's judgments: each query's best-ranked pooled document is relevant (1), the others not (0)."""
    best: dict[str, tuple[int, str]] = {}
    for r in rows:
        best[r["query_id"]] = min(best.get(r["query_id"], (99, "")), (int(r["best_rank"]), r["doc_id"]))
    return {(r["query_id"], r["doc_id"]): int(best[r["query_id"]][1] == r["doc_id"]) for r in rows}


@pytest.mark.parametrize("via", ["pool.csv", "quepid.csv", "pool.trec"])
def test_pool_round_trip_rescores_without_requerying(
    via: str,
    base_run: Path,
    gate_data: Path,
    pooled: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = sheet_rows(pooled / "pool.csv")
    grades = _judge(rows)
    judged = tmp_path / via
    if via == "pool.csv":
        write_rows(judged, [{**r, "rating": str(grades[(r["query_id"], r["doc_id"])])} for r in rows])
    elif via == "quepid.csv":  # as Quepid's export would give it back: queries by their text
        ds = load_dataset(str(gate_data))
        quepid = [{"query": ds.queries[q], "docid": d, "rating": str(g)} for (q, d), g in grades.items()]
        write_rows(judged, quepid)
    else:  # the assessor appends a grade to each pool line
        lines = (pooled / "pool.trec").read_text().splitlines()
        judged.write_text("".join(f"{line} {grades[(line.split()[0], line.split()[2])]}\n" for line in lines))
    before = RunResults.load(base_run)
    checkpoints = {p: p.stat().st_mtime_ns for p in (base_run / "arms").rglob("*.json")}
    out = tmp_path / "rescored"
    assert main(["rescore", str(base_run), "--qrels", str(judged), "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"{len(rows)} judgments for {GATE_DATASET}, {len(rows)} new, 0 changed" in text
    assert {
        p: p.stat().st_mtime_ns for p in (base_run / "arms").rglob("*.json")
    } == checkpoints  # no search again
    assert RunResults.load(base_run) == before  # the original is untouched

    after = RunResults.load(out).datasets[GATE_DATASET]
    ds = load_dataset(str(gate_data))
    merged = {q: dict(docs) for q, docs in ds.qrels.items()}
    for (q, d), g in grades.items():
        merged[q][d] = g
    hybrid = load_ranking(trec_path(out, GATE_DATASET, "hybrid"))
    ref = reference(merged, hybrid)
    ours = {r.qid: r.metrics for r in load_per_query(out) if r.arm == "hybrid"}
    for key, per_query in ref.items():
        for qid, value in per_query.items():
            assert ours[qid][key] == pytest.approx(value, abs=1e-6), (key, qid)
    old = before.datasets[GATE_DATASET].arms["hybrid"].metrics
    new = after.arms["hybrid"].metrics
    assert new["unjudged@10"] == 0.0 and old["unjudged@10"] > 0.5
    assert new["ndcg@10"] > old["ndcg@10"]  # new relevant documents in the top 10, none removed
    assert new["ndcg_judged@10"] == pytest.approx(new["ndcg@10"])  # nothing left to condense
    assert after.fingerprint == load_dataset(str(gate_data)).with_qrels(merged).fingerprint.combined
    manifest = RunResults.load(out).manifest
    assert manifest.rescore is not None and manifest.rescore.source_run == before.manifest.run_id
    assert manifest.rescore.judgments[0].added == len(rows)
    assert (out / "qrels" / f"{GATE_DATASET}.qrels").is_file() and (out / "report.md").is_file()
    # scored with other judgments than the original: the two cannot be gated against each other
    capsys.readouterr()
    assert (
        main(["gate", str(out), "--baseline", str(base_run), "--require", "hybrid:ndcg@10 drop<=0.02"]) == 2
    )
    assert (
        "(different qrels): runs over different data or judgments cannot be compared"
        in capsys.readouterr().out
    )
    # the re-scored run is a run directory like any other: pooling it again finds hybrid's top 10 judged
    capsys.readouterr()
    assert main(["pool", str(out), "--arms", "hybrid", "--output", str(tmp_path / "again")]) == 0
    assert f"{GATE_DATASET}: 0 unjudged pairs over 0 queries" in capsys.readouterr().out


def test_rescoring_with_the_runs_own_judgments_changes_nothing(
    base_run: Path, gate_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dataset's own qrels, given back (replace mode): the same figures, the same fingerprint, so
    the re-scored run gates against the original (exit 0: no change)."""
    out = tmp_path / "same"
    qrels = gate_data / "qrels" / "test.tsv"
    assert (
        main(["rescore", str(base_run), "--qrels", str(qrels), "--mode", "replace", "--output", str(out)])
        == 0
    )
    before, after = (
        RunResults.load(base_run).datasets[GATE_DATASET],
        RunResults.load(out).datasets[GATE_DATASET],
    )
    assert after.fingerprint == before.fingerprint
    assert {a: r.metrics for a, r in after.arms.items()} == {a: r.metrics for a, r in before.arms.items()}
    assert after.significance == before.significance
    capsys.readouterr()
    code = main(["gate", str(out), "--baseline", str(base_run), "--require", "hybrid:ndcg@10 drop<=0"])
    assert code == 0 and "no change" in capsys.readouterr().out


def test_a_rescored_run_is_written_beside_never_over(
    base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = tmp_path / "extra.qrels"
    first = next(iter(RunResults.load(base_run).datasets[GATE_DATASET].arms))
    qid = json.loads((base_run / "per_query.jsonl").read_text().splitlines()[0])["qid"]
    extra.write_text(f"{qid} 0 some-unjudged-doc 1\n")
    assert main(["rescore", str(base_run), "--qrels", str(extra)]) == 0
    default = next((base_run / "rescored").iterdir())
    assert default.name.startswith("extra-") and (default / "results.json").is_file() and first
    assert main(["rescore", str(base_run), "--qrels", str(extra)]) == 0  # the same re-score again: fine
    capsys.readouterr()
    assert main(["rescore", str(base_run), "--qrels", str(extra), "--output", str(base_run)]) == 2
    assert "is the run directory itself" in capsys.readouterr().err
    other = tmp_path / "other.qrels"
    other.write_text(f"{qid} 0 some-unjudged-doc 0\n")
    assert main(["rescore", str(base_run), "--qrels", str(other), "--output", str(default)]) == 2
    assert "already holds another run's results" in capsys.readouterr().err


def test_pool_keeps_a_sheet_being_judged(
    base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p"
    assert main(["pool", str(base_run), "--arms", "lexical", "--output", str(out)]) == 0
    assert (
        main(["pool", str(base_run), "--arms", "lexical", "--output", str(out)]) == 0
    )  # no ratings yet: rewritten
    sheet = out / GATE_DATASET / "pool.csv"
    rows = sheet_rows(sheet)
    rows[0]["rating"] = "2"
    write_rows(sheet, rows)
    capsys.readouterr()
    assert main(["pool", str(base_run), "--arms", "lexical", "--output", str(out)]) == 2
    assert "already holds ratings" in capsys.readouterr().err
    assert sheet_rows(sheet)[0]["rating"] == "2"


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            ["pool", "{run}", "--arms", "sideways"],
            "expected arms of gate-subset (lexical, vector, hybrid, hybrid-engine-sum), found sideways",
        ),
        (["pool", "{run}", "--dataset", "nope"], "expected datasets of the run (gate-subset), found nope"),
        (["rescore", "{run}", "--qrels", "{run}/nothing.qrels"], "expected a judgments file, found no file"),
        (
            ["rescore", "{run}", "--qrels", "{bad}"],
            "bad.qrels:2: error: expected 4 whitespace-separated columns",
        ),
        (
            ["rescore", "{run}", "--qrels", "{bad}", "--mode", "overwrite"],
            "--mode overwrite: expected one of merge, fill, replace, found 'overwrite'",
        ),
    ],
)
def test_bad_inputs_are_clear(
    argv: list[str], fragment: str, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1 1\n1 d2\n")
    code = main([a.format(run=base_run, bad=bad) for a in argv])
    err = capsys.readouterr().err
    assert code != 0 and fragment in err, err


def test_the_old_name_out_works_for_one_release(
    base_run: Path, gate_data: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """``--out`` is ``--output`` now: one line, and the same pool and the same re-scored figures."""
    written = {}
    for spelled in ("--output", "--out"):
        out = tmp_path / spelled.strip("-")
        assert main(["pool", str(base_run), "--arms", "hybrid", spelled, str(out / "pool")]) == 0
        qrels = gate_data / "qrels" / "test.tsv"
        assert main(["rescore", str(base_run), "--qrels", str(qrels), spelled, str(out / "rescored")]) == 0
        lines = deprecated(capfd.readouterr().err)
        assert lines == ([] if spelled == "--output" else [line("--out", "--output")] * 2)
        sheet = (out / "pool" / GATE_DATASET / "pool.csv").read_bytes()
        rescored = RunResults.load(out / "rescored").datasets[GATE_DATASET]
        written[spelled] = (sheet, {a: r.metrics for a, r in rescored.arms.items()})
    assert written["--out"] == written["--output"]


def test_a_pool_for_a_judge_keeps_the_judged_pairs_too(base_run: Path, gate_data: Path) -> None:
    """``harness judge`` pools the judged pairs as well: a judge's agreement with people is measured on them."""
    run = RunData.load(base_run)
    unjudged = pool_dataset(run, GATE_DATASET, ["hybrid", "lexical"], 10, None)
    everything = pool_dataset(run, GATE_DATASET, ["hybrid", "lexical"], 10, None, include_judged=True)
    ds = load_dataset(str(gate_data))
    rankings = [load_ranking(trec_path(base_run, GATE_DATASET, a)) for a in ("hybrid", "lexical")]
    top = {(q, d) for r in rankings for q in ds.qrels for d in r[q][:10]}
    assert {(e.qid, e.doc_id) for e in everything.entries} == top
    assert {(e.qid, e.doc_id) for e in unjudged.entries} == {(q, d) for q, d in top if d not in ds.qrels[q]}
    assert everything.per_arm == unjudged.per_arm  # the counts of unjudged pairs are the same
