"""``[judgments] source = "judge"``: an experiment's arms scored with an LLM judge's labels of their own pooled
top-k, on the real engines (stand-in judges behind tests/_openai_server.py: rules from the human labels, not an
LLM; they measure the machinery, never a model's quality).

The cut is the session's 40 SciFact claims over 300 abstracts (``gate_data``); the arms are lexical, vector and
their RRF fusion, written as the experiment file's own arms. The judge stage sits after the search (every arm
has its run) and before scoring; its answers are cached as they arrive, so the same command again searches
nothing (every arm from its checkpoint) and calls no LLM.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.eval import cohen_kappa, evaluate
from harness.results import JudgeProvenance, RunResults, load_ranking, rank_run, trec_path
from indexer import ConnectionSettings, load_dataset, read_judgments
from tests._openai_server import OpenAIServer
from tests.harness.conftest import GATE_DATASET
from tests.harness.judgments.judge.conftest import truth_of

ARMS = """
datasets = ["{data}"]

[[arms]]
name = "lexical"
template_file = "builtin:lexical"

[[arms]]
name = "vector"
template_file = "builtin:vector"
model = "minilm"

[[fused]]
name = "hybrid"
inputs = ["lexical", "vector"]
fusion = "rrf"

[ann]
recall = false
"""
JUDGE = """
[judgments]
source = "judge"
mode = "replace"
llm = "flip:0.1"
template = "binary"
llm_url = "{url}"
cache_dir = "cache"
depth = 10
"""


def _run(capsys: pytest.CaptureFixture[str], url: str, *argv: str) -> tuple[int, str]:
    code = main(["run", *argv, "--url", url, "--records", "jsonl", "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _judge_of(run_dir: Path) -> JudgeProvenance:
    used = RunResults.load(run_dir).datasets[GATE_DATASET].judgments
    assert used is not None and used.judge is not None
    return used.judge


@pytest.fixture()
def standins(server: OpenAIServer, gate_data: Path) -> OpenAIServer:
    server.state.judge_labels = truth_of(gate_data)
    return server


@pytest.fixture()
def exp_file(standins: OpenAIServer, gate_data: Path, tmp_path: Path) -> Path:
    path = tmp_path / "exp.toml"
    path.write_text(ARMS.format(data=gate_data) + JUDGE.format(url=standins.url))
    return path


def _answers(run_dir: Path) -> list[dict[str, object]]:
    [folder] = (run_dir / "judged").iterdir()
    lines = (folder / GATE_DATASET / "answers.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _searches(es: Any) -> int:
    return int(es.indices.stats(metric="search")["_all"]["total"]["search"]["query_total"])


def test_an_experiment_scores_its_arms_with_the_judges_labels_and_a_rerun_calls_nothing(
    es_url: str, es_inspect: Any, exp_file: Path, standins: OpenAIServer, gate_data: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    out = tmp_path / "run"
    code, text = _run(capsys, es_url, "--experiment", str(exp_file), "--output", str(out))
    assert code == 0, text
    calls = standins.state.calls["chat"]
    results = RunResults.load(out)
    ds = results.datasets[GATE_DATASET]
    assert ds.judgments is not None and ds.judgments.mode == "replace"
    judge = _judge_of(out)
    assert judge.id.startswith("flip:0.1/") and judge.scale == "binary"
    assert ds.judgments.label.endswith(f"labels of judge {judge.id} alone")
    # every pooled pair (top 10 of the three arms) was judged once, and the agreement measured against people
    rows = _answers(out)
    assert calls == len(rows) == judge.pairs > 100
    agreement = judge.agreement
    assert agreement is not None and agreement.combined.pairs == len(rows)
    human = [int((r["human"] or 0) >= 1) for r in rows]  # type: ignore[operator]
    labels = [int(r["label"]) for r in rows]  # type: ignore[call-overload]
    assert agreement.combined.binary.value == pytest.approx(cohen_kappa(human, labels, labels=[0, 1]).value)
    systems = agreement.combined.systems
    assert systems is not None and set(systems.systems) == {"lexical", "vector", "hybrid"}
    # the figures are the judge's: each arm's nDCG@10 against the judge's labels alone
    qrels = read_judgments(out / "qrels" / f"{GATE_DATASET}.qrels").qrels().qrels
    assert qrels == {
        q: {str(r["doc_id"]): int(r["label"]) for r in rows if r["query_id"] == q} for q in qrels
    }
    for arm, result in ds.arms.items():
        run = rank_run(load_ranking(trec_path(out, GATE_DATASET, arm)))
        assert result.metrics["ndcg@10"] == pytest.approx(
            evaluate(qrels, run, ["ndcg@10"]).mean("ndcg@10"), abs=1e-6
        )
    assert judge.id in (out / "report.md").read_text()
    assert f"{GATE_DATASET}: judgments: {ds.judgments.label}; judge {judge.id}: " in " ".join(text.split())
    # the same command again: every arm from its checkpoint, every answer from the judge's cache
    searched = _searches(es_inspect)
    code, again = _run(capsys, es_url, "--experiment", str(exp_file), "--output", str(out))
    assert code == 0, again
    assert standins.state.calls["chat"] == calls
    # (an arm searched again sends one search per query, 40; the index check every run makes sends a few)
    assert _searches(es_inspect) - searched < len(load_dataset(str(gate_data)).queries) / 4
    assert "2 arms reused" in again and f"{len(rows):,} answers cached, 0 calls to make" in again, again
    rerun = RunResults.load(out).datasets[GATE_DATASET]
    assert {a: r.metrics for a, r in rerun.arms.items()} == {a: r.metrics for a, r in ds.arms.items()}
    # a gate over the run says whose labels its relevance rules read, and how far they agree with people
    code = main(["gate", str(out), "--require", "hybrid:ndcg@10>=0.05"])
    gated = capsys.readouterr()
    assert code == 0, gated.out + gated.err
    assert (
        f"{GATE_DATASET}: rules over relevance read labels of judge {judge.id}: {judge.agreement_text()}"
        in (gated.out + gated.err)
    )
    with capsys.disabled():
        k = agreement.combined.binary
        print(f"\n  judge flip:0.1 in an experiment: {len(rows)} pairs, kappa {k.value:.4f} [{k.low:.3f}, {k.high:.3f}], "
              f"tau {systems.kendall_tau:.2f}; hybrid ndcg@10 {ds.arms['hybrid'].metrics['ndcg@10']:.4f} (judge labels)")  # fmt: skip


def test_the_same_through_set_on_opensearch_with_the_documents_read_from_the_index(
    os_settings: ConnectionSettings, gate_data: Path, standins: OpenAIServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    out = tmp_path / "run"
    sets = {
        "judgments.source": "judge",
        "judgments.llm": "random",
        "judgments.llm_url": standins.url,
        "judgments.cache_dir": str(tmp_path / "cache"),
        "judgments.mode": "fill",
        "judgments.context_source": "index",
        "judgments.context_fields": "title,text",
        "judgments.depth": "5",
        "judgments.arms": "lexical",
    }
    argv = ["lexical", "-d", str(gate_data), "--output", str(out)]
    code, text = _run(
        capsys, os_settings.url, *argv, *(a for k, v in sets.items() for a in ("--set", f"{k}={v}"))
    )
    assert code == 0, text
    ds = RunResults.load(out).datasets[GATE_DATASET]
    judge = _judge_of(out)
    assert judge.id.startswith("random/") and ds.judgments is not None and ds.judgments.mode == "fill"
    assert ds.judgments.label.startswith("the dataset's own judgments, with judged/")
    rows = _answers(out)
    assert len(rows) == judge.pairs == standins.state.calls["chat"] and len(rows) <= 5 * len(ds.arms) * 40
    # fill: people's grades kept, the judge's only where they judged nothing
    human = load_dataset(str(gate_data)).qrels
    scored = read_judgments(out / "qrels" / f"{GATE_DATASET}.qrels").qrels().qrels
    assert all(scored[q][d] == g for q, docs in human.items() for d, g in docs.items())
    added = {
        (str(r["query_id"]), str(r["doc_id"])) for r in rows if r["human"] is None and r["label"] is not None
    }
    assert added and all(str(q) in scored and d in scored[q] for q, d in added)
    k = judge.agreement.combined.binary if judge.agreement else None
    assert k is not None and k.low <= 0.0 <= k.high  # a random judge: kappa near 0
