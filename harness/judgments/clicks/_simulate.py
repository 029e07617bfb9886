"""Simulated UBI logs: searches over a judged dataset, clicked by a position-based click model (seeded).

Each query gets one ranking of ``depth`` documents: its judged relevant documents and non-relevant
ones drawn from the corpus (documents the qrels do not judge, taken as grade 0), shuffled, so that
relevant documents sit at every rank. Searches are spread over the queries by a Zipf law (query
``i`` of the shuffled list gets a share ``∝ 1 / i ** zipf``, at least ``min_searches``).

Clicks follow the position-based model (Craswell et al. 2008): a result at rank r is examined with
probability ``r ** -eta`` and, when examined, clicked with probability ``attract(grade)``, rising
linearly from ``attract_low`` (grade 0) to ``attract_high`` (the qrels' top grade). Every search
writes a ``ubi_queries`` row (its hits in order) and, with ``impressions="events"``, one impression
event per result shown; every click is a click event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from base import ConfigError, write_text_atomic
from harness._errors import SettingError
from harness.keys import RESULTS, between, key
from harness.results import trec_lines
from indexer import CLICK, IMPRESSION, UbiEvent, UbiLog, UbiQuery, write_ubi_files

IMPRESSION_MODES = ("events", "hit_ids")
START = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class SimulationSpec:
    """A simulated log's settings (the ``simulate.*`` keys of ``harness clicks simulate``)."""

    searches: int = key(30000, affects=RESULTS, check=between(1, 10_000_000), doc="searches to simulate")
    depth: int = key(10, affects=RESULTS, check=between(1, 1000), doc="results shown per search")
    eta: float = key(
        1.0, affects=RESULTS, check=between(0, 10), doc="position bias: rank r examined as r ** -eta"
    )
    attract_low: float = key(
        0.1, affects=RESULTS, check=between(0, 1), doc="click chance of a grade-0 result"
    )
    attract_high: float = key(0.7, affects=RESULTS, check=between(0, 1), doc="click chance of the top grade")
    zipf: float = key(1.0, affects=RESULTS, check=between(0, 10), doc="skew of searches over the queries")
    min_searches: int = key(
        50, affects=RESULTS, check=between(1, 1_000_000), doc="searches per query, at least"
    )
    days: int = key(30, affects=RESULTS, check=between(1, 3650), doc="days the searches spread over")
    impressions: str = key(
        "events",
        affects=RESULTS,
        choices=lambda: IMPRESSION_MODES,
        doc="events (impression events) | hit_ids (the searches' hits only)",
    )
    seed: int = key(42, affects=RESULTS, doc="random seed")

    def check(self) -> None:
        if not self.attract_low < self.attract_high:
            raise SettingError(
                "attract_low",
                f"expected below {{simulate.attract_high}}, found {self.attract_low} >= {self.attract_high}",
            )


@dataclass(frozen=True, slots=True)
class Simulation:
    """The log written, the ranking each query was shown, and the truth the clicks followed."""

    spec: SimulationSpec
    log: UbiLog
    rankings: dict[str, tuple[str, ...]]
    truth: dict[str, dict[str, int]]
    """The grade of every document shown: the qrels', 0 for the non-relevant documents drawn."""


def rankings(
    qrels: Mapping[str, Mapping[str, int]], corpus_ids: Sequence[str], depth: int, rng: np.random.Generator
) -> dict[str, tuple[str, ...]]:
    """Per query: its relevant documents and corpus documents it does not judge, ``depth`` in all, shuffled."""
    out: dict[str, tuple[str, ...]] = {}
    for qid in sorted(qrels):
        relevant = sorted(d for d, g in qrels[qid].items() if g > 0)[:depth]
        shown = list(relevant)
        while len(shown) < depth:
            doc_id = corpus_ids[int(rng.integers(len(corpus_ids)))]
            if doc_id not in qrels[qid] and doc_id not in shown:
                shown.append(doc_id)
        out[qid] = tuple(shown[i] for i in rng.permutation(depth))
    return out


def _shares(qids: list[str], spec: SimulationSpec, rng: np.random.Generator) -> dict[str, int]:
    """Searches per query: ``min_searches`` each, the rest by a Zipf law over a random order of the queries
    (largest remainders rounded up, so the total is ``searches`` when that exceeds the minimum)."""
    order = [qids[i] for i in rng.permutation(len(qids))]
    weights = 1.0 / np.arange(1, len(order) + 1, dtype=np.float64) ** spec.zipf
    spare = max(spec.searches - spec.min_searches * len(order), 0)
    exact = weights / weights.sum() * spare
    extra = np.floor(exact).astype(int)
    extra[np.argsort(-(exact - extra), kind="stable")[: spare - int(extra.sum())]] += 1
    return {qid: spec.min_searches + int(n) for qid, n in zip(order, extra, strict=True)}


@dataclass(frozen=True, slots=True)
class _Shown:
    """One query's ranking and the click probability at each of its ranks."""

    text: str
    docs: tuple[str, ...]
    p_click: np.ndarray


def _search(
    n: int, moment: datetime, shown: _Shown, spec: SimulationSpec, rng: np.random.Generator
) -> tuple[UbiQuery, list[UbiEvent]]:
    """Search number ``n``: its ``ubi_queries`` row, its impression events (if asked for) and its clicks."""
    search_id, client = f"sim-{n:07d}", f"client-{n % 997:03d}"
    events = []
    if spec.impressions == "events":
        events += [
            UbiEvent(IMPRESSION, search_id, moment, d, r, shown.text, client)
            for r, d in enumerate(shown.docs, 1)
        ]
    later = moment + timedelta(seconds=5)
    for r in np.flatnonzero(rng.random(len(shown.docs)) < shown.p_click):
        events.append(UbiEvent(CLICK, search_id, later, shown.docs[r], int(r) + 1, shown.text, client))
    return UbiQuery(search_id, shown.text, moment, shown.docs, client), events


def _shown(
    text: str, docs: tuple[str, ...], judged: Mapping[str, int], top: int, spec: SimulationSpec
) -> _Shown:
    grades = np.array([judged.get(d, 0) for d in docs], dtype=np.float64)
    examine = np.arange(1, len(docs) + 1, dtype=np.float64) ** -spec.eta
    attract = spec.attract_low + (spec.attract_high - spec.attract_low) * grades / top
    return _Shown(text, docs, examine * attract)


def simulate(
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    corpus_ids: Sequence[str],
    spec: SimulationSpec | None = None,
) -> Simulation:
    """A UBI log of about ``spec.searches`` searches of ``queries`` clicked by the position-based model,
    in random order over ``spec.days`` days."""
    spec = spec or SimulationSpec()
    judged = {q: docs for q, docs in qrels.items() if q in queries and any(g > 0 for g in docs.values())}
    if not judged:
        raise ConfigError("expected queries with relevant judgments to simulate searches of, found none")
    rng = np.random.default_rng(spec.seed)
    shown = rankings(judged, corpus_ids, spec.depth, rng)
    top = max(g for docs in judged.values() for g in docs.values())
    ranked = {q: _shown(queries[q], shown[q], judged[q], top, spec) for q in sorted(judged)}
    schedule = [q for q, count in _shares(sorted(judged), spec, rng).items() for _ in range(count)]
    rows, events = [], []
    for n, i in enumerate(rng.permutation(len(schedule))):
        moment = START + timedelta(days=spec.days) * (n / len(schedule))
        row, made = _search(n, moment, ranked[schedule[i]], spec, rng)
        rows.append(row)
        events += made
    truth = {q: {d: judged[q].get(d, 0) for d in docs} for q, docs in shown.items()}
    log = UbiLog(tuple(rows), tuple(events), source=f"simulated ({len(rows)} searches, seed {spec.seed})")
    return Simulation(spec, log, shown, truth)


#: the synthetic systems' weights: (on the true grade, on the order the log showed), one system each
SYSTEM_WEIGHTS = tuple((rel, order) for rel in (0.0, 0.3, 0.6, 1.0, 1.5) for order in (0.0, 1.0))
SYSTEM_NOISE = 0.5


def systems(simulation: Simulation, seed: int = 7) -> dict[str, dict[str, dict[str, float]]]:
    """Runs of re-rankers of each query's shown documents, to order by a measure under two sets of labels.

    System ``rel{a}_order{b}`` scores a document ``a * grade + b * (1 - (rank - 1) / depth) + noise``:
    the more ``a``, the better under the true grades; ``b`` keeps the order the log showed, which
    judgments biased by position (raw CTR) credit more than they should.
    """
    rng = np.random.default_rng(seed)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for rel, order in SYSTEM_WEIGHTS:
        run: dict[str, dict[str, float]] = {}
        for qid, docs in simulation.rankings.items():
            noise = rng.normal(0.0, SYSTEM_NOISE, len(docs))
            truth = simulation.truth[qid]
            run[qid] = {
                d: rel * truth[d] + order * (1 - r / len(docs)) + noise[r] for r, d in enumerate(docs)
            }
        runs[f"rel{rel}_order{order:.0f}"] = run
    return runs


def trec_text(run: Mapping[str, Mapping[str, float]], tag: str) -> str:
    """A run as TREC run lines (``QUERY_ID Q0 DOC_ID RANK SCORE TAG``; trec_eval's order, scores as written
    by the run directory's writer)."""
    return "".join(trec_lines(run, tag))


def write_simulation(folder: Path | str, simulation: Simulation) -> list[Path]:
    """The log (``ubi_queries.jsonl``, ``ubi_events.jsonl``) and the systems' runs (``runs/<name>.trec``)."""
    written = list(write_ubi_files(folder, simulation.log))
    for name, run in systems(simulation).items():
        path = Path(folder) / "runs" / f"{name}.trec"
        write_text_atomic(path, trec_text(run, name))
        written.append(path)
    return written
