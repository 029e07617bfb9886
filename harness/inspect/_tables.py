"""The tables of a run, built once from typed results and drawn by every report.

``arm_table`` (one per dataset: every arm's metrics, CI, timing, and the paper's
baselines as dim rows), ``significance_table`` and ``summary_table`` (nDCG@10 of every
arm on every dataset beside the paper); the published baselines are
:mod:`harness.inspect._baselines`. The terminal output of
``harness run`` and ``harness report``, ``report.md`` and the HTML report all draw
these same tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from base import slug
from harness.inspect._judgments import judgments_line, judgments_summary
from harness.inspect._table import SIG_MARK, Cell, Column, Table
from harness.results import ArmResult, Comparison, DatasetResult, RunResults

CI_MEASURE = "ndcg@10"
#: measure columns of the arm table: (results.json measure, header)
MEASURE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("ndcg@10", "nDCG@10 [95% CI]"),
    ("ndcg_judged@10", "nDCG'@10"),
    ("ndcg@100", "nDCG@100"),
    ("recall@10", "R@10"),
    ("recall@100", "R@100"),
    ("map@100", "MAP@100"),
    ("mrr@100", "MRR@100"),
    ("p@10", "P@10"),
    ("unjudged@10", "unjudg@10"),
)
#: timing columns of the arm table (the relevance pass): (header, value of an arm)
TIMING_COLUMNS: tuple[tuple[str, Callable[[ArmResult], str]], ...] = (
    ("batch ms p50/p95/p99", lambda a: f"{a.batch_ms.p50:.0f}/{a.batch_ms.p95:.0f}/{a.batch_ms.p99:.0f}"),
    ("took p50", lambda a: f"{a.engine_took_ms.p50:.0f}"),
    ("batch q/s", lambda a: fmt(a.qps, 1)),
)
#: columns shown when the run had a load phase or ANN recall: (header, value, shown when)
LOAD_COLUMNS: tuple[tuple[str, Callable[[ArmResult], str]], ...] = (
    (
        "svc ms p50/p99",
        lambda a: f"{a.load.service_time_ms.p50:.1f}/{a.load.service_time_ms.p99:.1f}" if a.load else "–",
    ),
    (
        "lat ms p50/p99",
        lambda a: f"{a.load.latency_ms.p50:.1f}/{a.load.latency_ms.p99:.1f}" if a.load else "–",
    ),
    ("req/s", lambda a: f"{a.load.throughput:.1f}" if a.load else "–"),
    ("err %", lambda a: f"{100 * a.load.error_rate:.1f}" if a.load else "–"),
)
ANN_COLUMNS: tuple[tuple[str, Callable[[ArmResult], str]], ...] = (
    ("ANN R@10", lambda a: fmt(a.ann.at(10), 4) if a.ann else "–"),
)
SIG_NOTE = f"{SIG_MARK}X: significantly different from arm X (paired test, Holm-corrected)."
TIMING_NOTE = (
    "Relevance pass: batch ms = client round trip of the msearch batch that carried the query (not "
    "per-query latency); took = engine time per search; batch q/s = queries over the pass's wall time."
)
LOAD_NOTE = (
    "Load phase: one search request per query, the same bodies; svc = service time, lat = latency "
    "(from the scheduled start under a target throughput), req/s = successful requests per second."
)
ANN_NOTE = "ANN R@10: the arm's kNN top 10 against the exact nearest neighbours of the same vectors."
JUDGED_NOTE = (
    "nDCG'@10 = judged-only (condensed) nDCG: unjudged documents are removed from the ranking before "
    "scoring (Sakai 2007); far above nDCG@10 when unjudg@10 is high, i.e. the judgments, not the ranking, "
    "may be what holds nDCG@10 down."
)


def fmt(value: float | None, digits: int = 4) -> str:
    """A score as text; ``–`` when absent."""
    return "–" if value is None else f"{value:.{digits}f}"


def _measure_cell(ds: DatasetResult, arm: str, result: ArmResult, measure: str) -> Cell:
    ci = result.ci95.get(measure) if measure == CI_MEASURE else None
    return Cell(
        fmt(result.metric(measure)),
        aside=f"[{ci[0]:.3f},{ci[1]:.3f}]" if ci else "",
        marks=tuple(ds.significantly_different(arm, measure)),
    )


def _extra_columns(ds: DatasetResult) -> tuple[tuple[str, Callable[[ArmResult], str]], ...]:
    loads = any(a.load is not None for a in ds.arms.values())
    anns = any(a.ann is not None for a in ds.arms.values())
    return (*(ANN_COLUMNS if anns else ()), *(LOAD_COLUMNS if loads else ()))


def arm_table(name: str, ds: DatasetResult) -> Table:
    """Every arm of one dataset, then the paper's baselines as dim rows; relevance, the relevance
    pass's batch timing, and (when measured) ANN recall and the load phase side by side."""
    extra = _extra_columns(ds)
    timing = (*TIMING_COLUMNS, *extra)
    columns = (
        Column("arm", "left"),
        *(Column(header) for _, header in MEASURE_COLUMNS),
        *(Column(header) for header, _ in timing),
    )
    rows: list[tuple[Cell, ...]] = []
    for arm, result in ds.arms.items():
        rows.append(
            (
                Cell(arm),
                *(_measure_cell(ds, arm, result, m) for m, _ in MEASURE_COLUMNS),
                *(Cell(value(result)) for _, value in timing),
            )
        )
    blank = tuple(Cell("", dim=True) for _ in range(len(columns) - 2))
    for label, ref in ds.paper.items():
        rows.append(
            (Cell(f"paper {label}", dim=True), Cell(fmt(ref.score), aside=ref.system, dim=True), *blank)
        )
    return Table(
        title=f"{name} ({ds.queries} queries)",
        columns=columns,
        rows=tuple(rows),
        key=f"table-{slug(name, fallback='x')}",
        notes=(
            judgments_line(ds),
            SIG_NOTE,
            TIMING_NOTE,
            JUDGED_NOTE,
            *((ANN_NOTE,) if any(h == ANN_COLUMNS[0][0] for h, _ in extra) else ()),
            *((LOAD_NOTE,) if any(h == LOAD_COLUMNS[0][0] for h, _ in extra) else ()),
        ),
    )


def _significance_row(c: Comparison, with_dataset: bool) -> tuple[Cell, ...]:
    cells = (
        Cell(f"{c.arm_b} vs {c.arm_a}"),
        Cell(c.measure),
        Cell(f"{c.mean_a:.4f}"),
        Cell(f"{c.mean_b:.4f}"),
        Cell(f"{c.delta:+.4f}"),
        Cell(f"{c.p_value:.3g}"),
        Cell(f"{c.p_holm:.3g}"),
        Cell("yes" if c.significant else "no"),
        Cell(c.test),
    )
    return (Cell(c.dataset), *cells) if with_dataset else cells


def significance_table(
    name: str, comparisons: Sequence[Comparison], *, title: str = "", with_dataset: bool = False
) -> Table:
    """Paired tests: B vs A, the means, Δ = mean B − mean A, p and Holm-corrected p."""
    headers = (
        "pair (B vs A)",
        "measure",
        "mean A",
        "mean B",
        "Δ (B−A)",
        "p",
        "p (Holm)",
        "significant",
        "test",
    )
    columns = tuple(Column(h, "left" if i in (0, 1, 8) else "right") for i, h in enumerate(headers))
    return Table(
        title=title or f"{name}: paired tests, Holm-corrected together",
        columns=((Column("dataset", "left"), *columns) if with_dataset else columns),
        rows=tuple(_significance_row(c, with_dataset) for c in comparisons),
        key=f"sig-{slug(name, fallback='x')}",
    )


def summary_table(results: RunResults) -> Table:
    """nDCG@10 of every arm on every dataset, beside the paper's baselines."""
    arms = results.arms
    labels = list(dict.fromkeys(label for d in results.datasets.values() for label in d.paper))
    rows = []
    for name, ds in results.datasets.items():
        cells = [Cell(name)]
        cells += [Cell(fmt(ds.arms[a].metric(CI_MEASURE)) if a in ds.arms else "–") for a in arms]
        cells += [Cell(fmt(ds.paper[p].score) if p in ds.paper else "–", dim=True) for p in labels]
        rows.append(tuple(cells))
    columns = (Column("dataset", "left"), *(Column(a) for a in arms), *(Column(f"paper {p}") for p in labels))
    return Table(
        title="nDCG@10 summary",
        columns=columns,
        rows=tuple(rows),
        key="summary",
        notes=(judgments_summary(results),),
    )
