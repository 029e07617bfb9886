"""``[judgments] source = "clicks"``: an experiment scored with click judgments of a UBI log, made before any search.

The log is simulated (:func:`harness.judgments.clicks.simulate`: a seeded position-based click model over the session's
40 SciFact claims, clicks following the qrels' grades), written as a JSON-lines export for the file's run on
Elasticsearch and indexed into the UBI indices of OpenSearch for the ``--set`` run. Every figure is scored
with the click model's grades (``mode = "replace"``), and says so; their agreement with people's judgments is
measured and carried beside them. The simulation measures the machinery, not any real users' behaviour.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.eval import evaluate
from harness.judgments.clicks import (
    ClickModelSpec,
    SimulationSpec,
    agreement,
    click_qrels,
    from_log,
    simulate,
)
from harness.results import RunResults, load_ranking, rank_run, trec_path
from indexer import Backend, Dataset, index_ubi, load_dataset, read_judgments, read_ubi_files, write_ubi_files
from tests._support import drop_indices
from tests.harness.conftest import GATE_DATASET

SPEC = SimulationSpec(searches=3000, seed=7)
CLICKS = """
mode = "lexical"

[data]
datasets = ["{data}"]

[judgments]
source = "clicks"
mode = "replace"
events = "log/ubi_events.jsonl"
queries = "log/ubi_queries.jsonl"
model = "coec"
"""
INDICES = {"events_index": "r2med-test-exp-events", "queries_index": "r2med-test-exp-queries"}


@pytest.fixture(scope="module")
def logged(gate_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Dataset, Path]:
    """The cut and a folder holding the simulated log's export (``log/``)."""
    ds = load_dataset(str(gate_data))
    sim = simulate(ds.queries, ds.qrels, [d.id for d in ds.iter_corpus()], SPEC)
    folder = tmp_path_factory.mktemp("clicks")
    write_ubi_files(folder / "log", sim.log)
    return ds, folder


def _scored(out: Path) -> dict[str, dict[str, int]]:
    return read_judgments(out / "qrels" / f"{GATE_DATASET}.qrels").qrels().qrels


def _run(capsys: pytest.CaptureFixture[str], url: str, *argv: str) -> str:
    code = main(["run", *argv, "--url", url, "--records", "jsonl", "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    return captured.out + captured.err


def test_an_experiment_scores_its_arms_with_click_judgments_of_a_log_export(
    es_url: str, logged: tuple[Dataset, Path], gate_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds, folder = logged
    path = folder / "exp.toml"
    path.write_text(CLICKS.format(data=gate_data))
    out = folder / "run-file"
    text = _run(capsys, es_url, "--experiment", str(path), "--output", str(out))
    log = read_ubi_files(folder / "log" / "ubi_events.jsonl", folder / "log" / "ubi_queries.jsonl")
    judged, ids = from_log(log, ClickModelSpec(), ds.queries)
    expected = click_qrels(judged, ids)
    assert _scored(out) == expected  # the click grades alone (replace)
    result = RunResults.load(out).datasets[GATE_DATASET]
    run = rank_run(load_ranking(trec_path(out, GATE_DATASET, "lexical")))
    assert result.arms["lexical"].metrics["ndcg@10"] == pytest.approx(
        evaluate(expected, run, ["ndcg@10"]).mean("ndcg@10"), abs=1e-6
    )
    measured = agreement(judged, ds.qrels, ids)
    k = measured.kappa
    used = result.judgments
    assert used is not None and used.mode == "replace" and used.judge is None
    assert used.label.startswith(f"coec click judgments of {folder / 'log' / 'ubi_events.jsonl'} and ")
    assert f"kappa {k.value:.3f} [{k.low:.3f}, {k.high:.3f}] on {measured.pairs:,} pairs" in used.label
    assert f"Cohen's kappa (relevant or not) {k.value:.3f}" in text  # said before the search
    beside = json.loads((out / "qrels" / f"{GATE_DATASET}.qrels.json").read_text())
    assert beside["spec"]["model"] == "coec" and beside["agreement"]["kappa"]["value"] == k.value
    assert used.label in (out / "report.md").read_text()
    with capsys.disabled():
        print(f"\n  clicks coec in an experiment: {measured.pairs} pairs, kappa {k.value:.4f} [{k.low:.3f}, {k.high:.3f}]; "
              f"lexical ndcg@10 {result.arms['lexical'].metrics['ndcg@10']:.4f} (click labels)")  # fmt: skip


def test_the_same_through_set_from_the_clusters_ubi_indices_with_raw_ctr(
    os_backend: Backend, logged: tuple[Dataset, Path], gate_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, folder = logged
    drop_indices(os_backend, "r2med-test-exp-*")
    index_ubi(
        os_backend,
        read_ubi_files(folder / "log" / "ubi_events.jsonl", folder / "log" / "ubi_queries.jsonl"),
        **INDICES,
    )
    sets = ["judgments.source=clicks", "judgments.model=ctr", "judgments.mode=replace"]
    sets += [f"judgments.{k}={v}" for k, v in INDICES.items()]
    out = folder / "run-set"
    argv = ["lexical", "-d", str(gate_data), "--output", str(out), *(a for s in sets for a in ("--set", s))]
    _run(capsys, os_backend.url, *argv)
    used = RunResults.load(out).datasets[GATE_DATASET].judgments
    assert used is not None and used.label.startswith(
        f"ctr click judgments of {os_backend.url} {INDICES['events_index']}"
    )
    coec_label = RunResults.load(folder / "run-file").datasets[GATE_DATASET].judgments.label  # type: ignore[union-attr]
    kappa = {
        name: float(label.split("kappa ")[1].split()[0])
        for name, label in (("ctr", used.label), ("coec", coec_label))
    }
    assert kappa["ctr"] < kappa["coec"]  # raw CTR, blind to position, agrees less with people
    drop_indices(os_backend, "r2med-test-exp-*")
