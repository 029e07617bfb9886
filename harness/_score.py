"""Score TREC run files against a judgments file: ``harness score``, a view over :func:`harness.eval.evaluate`.

The runs are read as trec_eval reads them (:func:`harness.results.read_run`), the judgments by the one
judgments reader (every format it knows, ``#`` comments and negative grades included), and each run is
scored by the harness's one evaluation path with the experiment's ``eval.*`` and ``stats.*`` keys. Several
runs are compared as ``harness compare`` compares arms: each against the first, paired tests
Holm-corrected together, with each mean's 95% bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from base import ConfigError
from harness.eval import Comparison, Evaluation, Measure, compare_arms, evaluate, judged_only, parse_measures
from harness.experiment import EvalTable, StatsTable
from harness.results import read_run, scores_and_intervals
from indexer import read_judgments

#: how trec_eval prints a value line (name padded to 22, tab, query, tab, 4 decimals)
TREC_LINE = "{name:<22}\t{qid}\t{value:6.4f}"


@dataclass(frozen=True, slots=True)
class ScoredRun:
    """One run file's evaluation, with the mean and 95% interval of each measure."""

    name: str
    path: Path
    evaluation: Evaluation
    means: dict[str, float]
    ci95: dict[str, tuple[float, float]]


@dataclass(frozen=True, slots=True)
class Scores:
    """Every run scored against one judgments file, and the paired tests of each run against the first."""

    qrels: Path
    measures: tuple[Measure, ...]
    runs: tuple[ScoredRun, ...]
    comparisons: tuple[Comparison, ...]
    settings: str
    """How the runs were scored (the protocol, the level, -c, judged-only), for the header."""


def run_names(paths: Sequence[Path]) -> list[str]:
    """Each run's name: its file's stem, or its path where stems repeat."""
    stems = [p.stem for p in paths]
    return [p.stem if stems.count(p.stem) == 1 else str(p) for p in paths]


def score_files(runs: Sequence[Path], qrels: Path, rules: EvalTable, stats: StatsTable) -> Scores:
    """Score each run file against ``qrels`` with the ``eval`` and ``stats`` keys."""
    if not runs:
        raise ConfigError("expected at least one run file to score, found none")
    judged = read_judgments(qrels).qrels(None).qrels
    measures = parse_measures(stats.measures)
    if rules.judged_only:
        measures = judged_only(measures)
    scored = []
    for name, path in zip(run_names(runs), runs, strict=True):
        ev = evaluate(
            judged,
            read_run(path),
            measures,
            relevance_level=rules.relevance_level,
            complete=rules.counts_empty,
        )
        means, ci95 = scores_and_intervals(ev, stats.seed)
        scored.append(ScoredRun(name, path, ev, means, ci95))
    comparisons: list[Comparison] = []
    if len(scored) > 1:
        _same_queries(scored)
        key = measures[0].key
        comparisons = compare_arms(
            {"score": {r.name: r.evaluation.per_query[key] for r in scored}},
            [(scored[0].name, r.name) for r in scored[1:]],
            measure=key,
            test=stats.test,
            alpha=stats.alpha,
            seed=stats.seed,
        )
    settings = rules.rules.name + (f", -l {rules.relevance_level}" if rules.relevance_level != 1 else "")
    settings += ", -c" if rules.counts_empty else ", mean over queries with results"
    settings += ", -J" if rules.judged_only else ""
    return Scores(qrels, measures, tuple(scored), tuple(comparisons), settings)


def _same_queries(scored: Sequence[ScoredRun]) -> None:
    """Paired tests need the same queries in every run (without -c, each run's own queries are scored)."""
    first = scored[0]
    for other in scored[1:]:
        if other.evaluation.qids != first.evaluation.qids:
            raise ConfigError(
                f"expected the same judged queries in every run to compare them, found {len(first.evaluation.qids)} "
                f"in {first.name} and {len(other.evaluation.qids)} in {other.name} (score with -c, "
                "eval.complete=true, to count the missing ones as 0)"
            )


def measure_name(measure: Measure) -> str:
    """trec_eval's name where it has one (``ndcg_cut_10``), else the harness's (``nDCG_judged@10``)."""
    return measure.trec_name or str(measure)


def trec_eval_lines(run: ScoredRun, measures: Sequence[Measure], per_query: bool) -> list[str]:
    """The run's scores as trec_eval prints them: with ``per_query`` each query's lines first (trec_eval's
    ``-q``), then the means (``all``)."""
    ev = run.evaluation
    lines = []
    if per_query:
        for qid in ev.qids:
            for m in measures:
                lines.append(TREC_LINE.format(name=measure_name(m), qid=qid, value=ev.per_query[m.key][qid]))
    for m in measures:
        lines.append(TREC_LINE.format(name=measure_name(m), qid="all", value=ev.means[m.key]))
    return lines
