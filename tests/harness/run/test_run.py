"""`harness run` end to end on both real engines and real SciFact data (a 300-document cut).

The module's hybrid run (and the tuning test) run once per engine (``engine_url``); the
embedding cache is shared, so the cut is embedded once for both.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import ir_measures
import jsonschema
import pytest
import ranx

from harness.cli import main
from harness.eval import RATIOS, top_k
from harness.inspect import render_html
from harness.results import SCHEMA_VERSION, Manifest, RunResults, load_per_query, load_records, schema
from indexer import Backend
from indexer.data import load_dataset
from tests._support import R2MED_DEMO, scifact_subset

MEASURES = {
    "ndcg@10": ir_measures.nDCG @ 10,
    "ndcg_judged@10": ir_measures.parse_measure("nDCG(judged_only=True)@10"),
    "ndcg@100": ir_measures.nDCG @ 100,
    "recall@100": ir_measures.R @ 100,
    "map@100": ir_measures.AP @ 100,
    "mrr@100": ir_measures.RR @ 100,
    "p@10": ir_measures.P @ 10,
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("runner") / "runner-subset", n_docs=300, n_test=40, n_train=40
    )


ARMS = ["lexical", "vector", "hybrid", "hybrid-engine-sum"]  # the stripped builds have no engine retrievers


@pytest.fixture(scope="module")
def hybrid_run(
    engine_url: str, backend: Backend, data_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("runs") / f"hybrid-{backend.product}"
    code = main(
        [
            "run",
            "hybrid",
            "--dataset",
            str(data_dir),
            "--output",
            str(out),
            "--url",
            engine_url,
            "--no-progress",
        ]
    )
    assert code == 0
    return out


def _results(run_dir: Path) -> RunResults:
    return RunResults.load(run_dir)


def _trec(path: Path) -> dict[str, dict[str, int]]:
    ranks: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, rank, _, _ = line.split()
        ranks.setdefault(qid, {})[doc] = int(rank)
    return ranks


def test_results_shape(hybrid_run: Path, data_dir: Path, backend: Backend) -> None:
    results = _results(hybrid_run)
    data = results.datasets["runner-subset"]
    assert list(data.arms) == ARMS
    for arm in data.arms.values():
        assert set(arm.metrics) == {
            "ndcg@10", "ndcg_judged@10", "ndcg@100", "recall@10", "recall@100", "map@100", "mrr@100", "p@10",
            "unjudged@10",
        }  # fmt: skip
        lo, hi = arm.ci95["ndcg@10"]
        assert lo <= arm.metrics["ndcg@10"] <= hi
        assert arm.qps is not None and arm.qps > 0 and arm.queries == 40
    sig = data.significance
    assert {(c.arm_a, c.arm_b) for c in sig} == {
        ("lexical", "vector"),
        ("lexical", "hybrid"),
        ("vector", "hybrid"),
        ("hybrid", "hybrid-engine-sum"),
    }
    # the in-engine sum's weights are recorded (neither --fusion wsum nor --tune-on: the plain sum)
    assert data.arms["hybrid-engine-sum"].weights == (1.0, 1.0)
    assert all(data.arms[a].weights is None for a in ARMS[:3])
    for c in sig:
        assert c.p_holm >= c.p_value and c.significant == (c.p_holm < 0.05)
        assert c.delta == pytest.approx(c.mean_b - c.mean_a)
    manifest = results.manifest
    ds = load_dataset(str(data_dir))
    assert manifest.datasets["runner-subset"].fingerprint["combined"] == ds.fingerprint.combined
    caps = manifest.engine.capabilities
    assert caps.flavour == backend.product and manifest.status == "complete"
    assert manifest.engine.version.startswith("9." if backend.product == "elasticsearch" else "3.")
    assert manifest.analysis == manifest.config["analysis"] and manifest.analysis in {"english", "hunspell"}
    assert manifest.config["engine"]["product"] == backend.product
    assert (
        manifest.model is not None
        and manifest.model.id.endswith("all-MiniLM-L6-v2")
        and manifest.model.revision
    )
    assert str(manifest.fusion) == "rrf:k=60" and manifest.harness_version
    assert data.mapping_hash
    assert {p.name for p in (hybrid_run / "runs" / "runner-subset").iterdir()} == {f"{a}.trec" for a in ARMS}
    assert (hybrid_run / "report.md").read_text().count("runner-subset") >= 1
    assert len(load_per_query(hybrid_run)) == 40 * len(ARMS)
    assert len(load_records(hybrid_run)) == 40 * len(ARMS)
    assert Manifest.load(hybrid_run / "manifest.json") == manifest


def test_results_json_validates_against_the_shipped_schema(hybrid_run: Path) -> None:
    data = json.loads((hybrid_run / "results.json").read_text())
    validator = jsonschema.Draft202012Validator(schema())
    assert list(validator.iter_errors(data)) == []
    assert data["schema_version"] == SCHEMA_VERSION
    broken = json.loads(json.dumps(data))
    broken["datasets"]["runner-subset"]["arms"]["hybrid"]["metrics"]["ndcg@10"] = "high"
    assert [e.message for e in validator.iter_errors(broken)] == ["'high' is not of type 'number'"]


def test_metrics_equal_pytrec_eval(hybrid_run: Path, data_dir: Path) -> None:
    ds = load_dataset(str(data_dir))
    qrels = [ir_measures.Qrel(q, d, g) for q, docs in ds.qrels.items() for d, g in docs.items()]
    ours = {(r.arm, r.qid): r.metrics for r in load_per_query(hybrid_run)}
    for arm in ARMS:
        ranks = _trec(hybrid_run / "runs" / "runner-subset" / f"{arm}.trec")
        # rank-derived scores: the reference sees exactly our order, whatever its own tie rule
        run = [ir_measures.ScoredDoc(q, d, -float(r)) for q, docs in ranks.items() for d, r in docs.items()]
        for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, run):
            key = next(k for k, m in MEASURES.items() if m == metric.measure)
            assert ours[(arm, metric.query_id)][key] == pytest.approx(metric.value, abs=1e-6), (
                arm,
                key,
                metric.query_id,
            )


def test_hybrid_equals_ranx_fusion(hybrid_run: Path) -> None:
    folder = hybrid_run / "runs" / "runner-subset"
    # rank-derived scores: ranx ranks the inputs exactly as the harness did (its own tie order differs)
    runs = []
    for arm in ("lexical", "vector"):
        ranks = _trec(folder / f"{arm}.trec")
        run = ranx.Run({q: {d: 1000.0 - r for d, r in docs.items()} for q, docs in ranks.items()}, name=arm)
        runs.append(run)
    lexical, vector = runs
    expected = top_k(ranx.fuse(runs=[lexical, vector], method="rrf", params={"k": 60}).to_dict(), 100)
    ranks = _trec(folder / "hybrid.trec")
    for qid, docs in expected.items():
        assert list(docs) == sorted(ranks[qid], key=ranks[qid].__getitem__), qid


def test_rerun_resumes_without_querying(hybrid_run: Path, data_dir: Path, engine_url: str) -> None:
    ckpts = sorted((hybrid_run / "arms").rglob("*.json"))
    assert {p.stem for p in ckpts} == {"lexical", "vector", "hybrid-engine-sum"}  # (the manifest guards them)
    before = {p: p.stat().st_mtime_ns for p in ckpts}
    old = _results(hybrid_run)
    args = ["run", "hybrid", "--dataset", str(data_dir), "--output", str(hybrid_run), "--url", engine_url]
    assert main([*args, "--no-progress", "--records", "jsonl"]) == 0
    assert {p: p.stat().st_mtime_ns for p in ckpts} == before
    new = _results(hybrid_run)
    for name, ds in new.datasets.items():  # the same scores; only timings differ
        assert {a: (r.metrics, r.ci95) for a, r in ds.arms.items()} == {
            a: (r.metrics, r.ci95) for a, r in old.datasets[name].arms.items()
        }
        assert ds.significance == old.datasets[name].significance


def test_records_in_the_engine(hybrid_run: Path, backend: Backend) -> None:
    run_id = _results(hybrid_run).manifest.run_id
    backend.refresh("harness-eval*")
    assert backend.count("harness-eval*", {"term": {"run_id": run_id}}) == 40 * len(ARMS)
    # the records carry the searched cluster's documents (read back through the backend)
    records = [r for r in load_records(hybrid_run) if r.arm == "hybrid-engine-sum"]
    assert records and all(h.title for r in records for h in r.top_hits[:3])


def test_tune_on_train_never_sees_test(engine_url: str, data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "tuned"
    args = [
        "run",
        "hybrid",
        "--dataset",
        str(data_dir),
        "--tune-on",
        "train",
        "--fusion",
        "wsum:norm=min-max",
    ]
    assert (
        main([*args, "--output", str(out), "--url", engine_url, "--no-progress", "--records", "jsonl"]) == 0
    )
    results = _results(out)
    tuned = results.manifest.fusion_tuned["runner-subset"]
    assert tuned.method == "wsum" and tuned.weights is not None and len(tuned.weights) == 2
    # the in-engine sum is tuned on the same train runs, on a log grid of lexical/vector ratios
    weights = results.datasets["runner-subset"].arms["hybrid-engine-sum"].weights
    assert weights is not None and sum(weights) == pytest.approx(1.0) and weights[1] > 0
    assert any(weights[0] / weights[1] == pytest.approx(r, rel=1e-3, abs=1e-9) for r in RATIOS)
    test_q = set(load_dataset(str(data_dir)).queries)
    train_q = set(load_dataset(str(data_dir), split="train").queries)
    for ckpt in (out / "arms" / "runner-subset" / "tune-train").glob("*.json"):
        seen = set(json.loads(ckpt.read_text())["run"])
        assert seen <= train_q and not seen & test_q


def test_expansion_hyde_on_r2med_format(es_url: str, tmp_path: Path) -> None:
    out = tmp_path / "hyde"
    args = ["run", "lexical", "--dataset", str(R2MED_DEMO), "--expansion", "hyde", "--output", str(out)]
    assert main([*args, "--url", es_url, "--no-progress", "--records", "jsonl"]) == 0
    (data,) = _results(out).datasets.values()
    assert list(data.arms) == ["lexical", "lexical+hyde"]
    assert [(c.arm_a, c.arm_b) for c in data.significance] == [("lexical", "lexical+hyde")]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "hybrid", "--dataset", "sample", "--depth", "5"],
            "--depth 5: expected 10..1000, found 5",
        ),
        (
            ["run", "lexical", "--dataset", "sample", "--tune-on", "train"],
            "--tune-on train: tunes fusion weights, so it needs the hybrid mode",
        ),
        (
            ["run", "lexical", "--dataset", "sample", "--bm25", "bogus"],
            "--bm25 bogus: expected one of es, r2med, found 'bogus'",
        ),
        (
            ["run", "lexical", "--dataset", "sample", "--records", "kafka"],
            "--records kafka: expected record sinks among jsonl, es",
        ),
        (["run", "hybrid", "--dataset", "sample", "--fusion", "nosuch"], "--fusion nosuch: "),
        (
            ["run", "sideways", "--dataset", "sample"],
            "MODE sideways: expected one of lexical, vector, hybrid, found 'sideways'",
        ),
    ],
)
def test_bad_flags_are_clear(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(argv)
    captured = capsys.readouterr()
    assert code != 0
    assert message in captured.err + captured.out


def test_default_dataset_points_to_sample_when_r2med_is_missing(
    es_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("R2MED_DATA_DIR", str(tmp_path / "nothing-here"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    code = main(["run", "lexical", "--url", es_url, "--no-progress", "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code != 0
    assert "--dataset sample" in err
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_a_real_r2med_run_draws_the_paper_bm25_line(es_url: str, tmp_path: Path) -> None:
    """Defect: the runner wrote paper["BM25"] as {system, score}, the chart read a number: no line was
    drawn on any R2MED dataset. A folder named like an R2MED dataset gets the paper's rows and the line."""
    folder = tmp_path / "Biology"
    shutil.copytree(R2MED_DEMO, folder)
    out = tmp_path / "bio"
    args = ["run", "lexical", "--dataset", str(folder), "--output", str(out), "--url", es_url]
    assert main([*args, "--no-progress", "--records", "jsonl"]) == 0
    paper = _results(out).datasets["Biology"].paper
    bm25 = paper["BM25"]
    assert bm25.system == "base retriever/bm25" and 0 < bm25.score < 1
    html = render_html(out)
    assert f'class="paper"><title>published BM25: {bm25.score:.4f}</title></line>' in html
