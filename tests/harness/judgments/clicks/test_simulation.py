"""The click models tested by simulation: a position-based click model over SciFact's queries and qrels,
written as UBI events, must give COEC judgments that recover the qrels; raw CTR, without the position
correction, must agree measurably less (its kappa interval below COEC's, and its ordering of systems worse).

The log: 80 SciFact test claims (the bundled sample), 8,000 searches (at least 50 a query, the rest by
a Zipf law), each showing 10 documents (the claim's relevant ones and corpus documents it does not judge,
at random ranks), clicked with probability rank**-1 * (0.1 non-relevant, 0.7 relevant). Seeded.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.judgments.clicks import (
    ClickModelSpec,
    Simulation,
    SimulationSpec,
    agreement,
    from_log,
    judge_clicks,
    simulate,
    systems,
)
from indexer import Backend, Dataset, index_ubi, load_dataset, read_ubi_files, read_ubi_index, write_ubi_files
from tests._support import drop_indices

QUERIES = 80
SPEC = SimulationSpec(searches=8000, seed=42)


@pytest.fixture(scope="module")
def sample() -> tuple[Dataset, list[str]]:
    data = load_dataset("sample")
    return data, [d.id for d in data.iter_corpus()]


def _simulate(
    sample: tuple[Dataset, list[str]], n: int, spec: SimulationSpec
) -> tuple[Simulation, dict, dict]:
    data, corpus = sample
    queries = {q: data.queries[q] for q in sorted(data.queries)[:n]}
    qrels = {q: data.qrels[q] for q in queries}
    return simulate(queries, qrels, corpus, spec), queries, qrels


@pytest.fixture(scope="module")
def simulated(sample: tuple[Dataset, list[str]]) -> tuple[Simulation, dict, dict]:
    return _simulate(sample, QUERIES, SPEC)


def test_the_log_follows_the_position_based_model(simulated: tuple[Simulation, dict, dict]) -> None:
    sim, queries, qrels = simulated
    clicks = [e for e in sim.log.events if e.action == "click"]
    assert len(sim.log.queries) == SPEC.searches and len(sim.log.events) - len(clicks) == 10 * len(
        sim.log.queries
    )
    by_rank = [sum(e.position == r for e in clicks) for r in range(1, 11)]
    assert by_rank[0] > 2 * by_rank[1] > 0 and by_rank[1] > by_rank[9]  # examination falls with rank
    relevant = [e for e in clicks if qrels[_qid(queries, e.user_query)].get(e.object_id, 0) > 0]
    assert len(relevant) > 0.3 * len(clicks)  # ~11% of results shown are relevant, clicked 7x as often


def _qid(queries: dict[str, str], text: str) -> str:
    return next(q for q, t in queries.items() if t == text)


def test_coec_recovers_the_qrels_and_raw_ctr_agrees_measurably_less(
    simulated: tuple[Simulation, dict, dict], tmp_path: Path
) -> None:
    sim, queries, qrels = simulated
    write_ubi_files(tmp_path, sim.log)  # through the JSON-lines export, as a user would give it
    log = read_ubi_files(tmp_path / "ubi_events.jsonl", tmp_path / "ubi_queries.jsonl")
    runs = systems(sim)
    figures = {}
    for model in ("coec", "ctr"):
        judged, ids = from_log(log, ClickModelSpec(model=model), queries)
        figures[model] = agreement(judged, qrels, ids, runs=runs)
    coec, ctr = figures["coec"], figures["ctr"]
    assert coec.pairs == ctr.pairs == QUERIES * SPEC.depth
    assert coec.kappa.value > 0.8 and coec.systems is not None and coec.systems.tau > 0.9
    assert ctr.kappa.high < coec.kappa.low  # measurably less: the intervals do not touch
    assert ctr.systems is not None and ctr.systems.tau < coec.systems.tau - 0.1
    assert ctr.pair_tau < coec.pair_tau


def test_every_cut_favours_coec(simulated: tuple[Simulation, dict, dict]) -> None:
    sim, queries, qrels = simulated
    for cut in (1.5, 2.0, 3.0):
        kappas = {}
        for model in ("coec", "ctr"):
            judged, ids = from_log(sim.log, ClickModelSpec(model=model, cuts=(cut,)), queries)
            kappas[model] = agreement(judged, qrels, ids).kappa.value
        assert kappas["coec"] > kappas["ctr"] + 0.1, (cut, kappas)


def test_hit_ids_instead_of_impression_events_give_the_same_judgments(
    sample: tuple[Dataset, list[str]],
) -> None:
    spec = replace(SPEC, searches=1000)
    by_events, _, _ = _simulate(sample, 20, spec)
    by_hits, _, _ = _simulate(sample, 20, replace(spec, impressions="hit_ids"))
    assert len(by_hits.log.events) < len(by_events.log.events) / 5
    assert (
        judge_clicks(by_hits.log, ClickModelSpec()).items
        == judge_clicks(by_events.log, ClickModelSpec()).items
    )


def test_a_log_in_the_cluster_judges_like_its_files(
    sample: tuple[Dataset, list[str]], backend: Backend
) -> None:
    sim, _, _ = _simulate(sample, 20, replace(SPEC, searches=1000))
    drop_indices(backend, "r2med-test-sim-*")
    names = {"events_index": "r2med-test-sim-events", "queries_index": "r2med-test-sim-queries"}
    index_ubi(backend, sim.log, **names)
    spec = ClickModelSpec(max_rank=8)  # filtered in the engine as on files
    from_index = judge_clicks(read_ubi_index(backend, keep=spec.event_filter(), **names), spec)
    assert from_index.items == judge_clicks(sim.log, spec).items and len(from_index.items) == 20 * 8
