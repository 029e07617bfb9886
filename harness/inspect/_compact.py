"""What a person reads after a run: one compact table that fits 100 columns, and one line of tests.

``print_results(results, console)`` prints, for every arm (of every dataset): nDCG@10 with its 95%
bootstrap interval, one recall figure (recall@100, the depth a first stage hands on), the mark of
a significant paired test, and the ANN recall where an arm searched vectors; then ONE line naming the
significant pairs (and, for a dataset scored with other judgments than its own, one line saying which). ``wide=True`` prints every table instead (arms with all measures and timings, load
phase, ANN sweep, paired tests, agreement), as ``harness report`` does; ``report.md`` keeps them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from rich.console import Console

from harness.eval import Comparison
from harness.inspect._judgments import judgments_line
from harness.inspect._perf_tables import dataset_tables
from harness.inspect._table import SIG_MARK, Cell, Column, Table, print_table
from harness.inspect._tables import CI_MEASURE, fmt
from harness.results import ArmResult, DatasetResult, RunResults

#: the widest the compact table may print
MAX_COLUMNS = 100
#: the recall figure, in order of preference (the first the run measured)
RECALL_MEASURES = ("recall@100", "recall@1000", "recall@10")
ANN_K = 10


def _recall_measure(results: RunResults) -> str | None:
    """The second figure: a recall the run measured (in order of preference), else its first other measure
    (``stats.measures = ["ndcg@10", "err@10"]`` shows ERR@10)."""
    measured = list(
        dict.fromkeys(m for ds in results.datasets.values() for arm in ds.arms.values() for m in arm.metrics)
    )
    recall = next((m for m in RECALL_MEASURES if m in measured), None)
    return recall or next((m for m in measured if m != CI_MEASURE), None)


def _tests(ds: DatasetResult) -> tuple[Comparison, ...]:
    """The dataset's paired tests on nDCG@10 (or on the one measure tested, if another)."""
    on_ndcg = tuple(c for c in ds.significance if c.measure == CI_MEASURE)
    return on_ndcg or ds.significance


def _ci(arm: ArmResult) -> str:
    ci = arm.ci95.get(CI_MEASURE)
    return f"{ci[0]:.3f}–{ci[1]:.3f}" if ci else "–"


def _row(name: str, arm: str, result: ArmResult, ds: DatasetResult, shape: _Shape) -> tuple[Cell, ...]:
    significant = any(arm in (c.arm_a, c.arm_b) and c.significant for c in _tests(ds))
    cells = [
        *((Cell(name),) if shape.datasets else ()),
        Cell(arm),
        Cell(fmt(result.metric(CI_MEASURE))),
        Cell(_ci(result)),
        Cell(SIG_MARK if significant else ""),
        *((Cell(fmt(result.metric(shape.recall))),) if shape.recall else ()),
        *((Cell(fmt(result.ann.at(ANN_K)) if result.ann else "–"),) if shape.ann else ()),
    ]
    return tuple(cells)


class _Shape:
    """Which columns the run's compact table has."""

    def __init__(self, results: RunResults) -> None:
        self.datasets = len(results.datasets) > 1
        self.recall = _recall_measure(results)
        self.ann = any(a.ann is not None for ds in results.datasets.values() for a in ds.arms.values())

    def columns(self) -> tuple[Column, ...]:
        return (
            *((Column("dataset", "left"),) if self.datasets else ()),
            Column("arm", "left"),
            Column("nDCG@10"),
            Column("95% CI"),
            Column("sig", "left"),
            *((Column(self.recall.replace("recall", "R")),) if self.recall else ()),
            *((Column(f"ANN R@{ANN_K}"),) if self.ann else ()),
        )


def _fit(rows: list[tuple[Cell, ...]], columns: tuple[Column, ...]) -> list[tuple[Cell, ...]]:
    """Shorten the name columns (dataset, arm), the widest first, with an ellipsis until the table fits
    MAX_COLUMNS (never below 12 characters)."""
    names = [i for i, c in enumerate(columns) if c.header in ("dataset", "arm")]
    widths = [max([len(c.header), *(len(r[i].plain()) for r in rows)]) for i, c in enumerate(columns)]
    limits = {i: widths[i] for i in names}
    excess = sum(w + 3 for w in widths) + 1 - MAX_COLUMNS
    while excess > 0 and any(w > 12 for w in limits.values()):
        widest = max(limits, key=lambda i: limits[i])
        limits[widest] -= 1
        excess -= 1

    def cut(cell: Cell, limit: int) -> Cell:
        return cell if len(cell.text) <= limit else Cell(cell.text[: limit - 1] + "…")

    return [tuple(cut(c, limits[i]) if i in limits else c for i, c in enumerate(r)) for r in rows]


def compact_table(results: RunResults) -> Table:
    """Every arm of every dataset: nDCG@10, its 95% CI, the significance mark, recall, ANN recall."""
    shape = _Shape(results)
    rows = [
        _row(name, arm, result, ds, shape)
        for name, ds in results.datasets.items()
        for arm, result in ds.arms.items()
    ]
    columns = shape.columns()
    (name, ds), *more = results.datasets.items()
    title = f"{name} ({ds.queries} queries)" if not more else f"{len(more) + 1} datasets"
    return Table(
        title=title,
        columns=columns,
        rows=tuple(_fit(rows, columns)),
        key="compact",
    )


def _pairs(name: str, tests: tuple[Comparison, ...], with_dataset: bool) -> Iterator[str]:
    for c in tests:
        if c.significant:
            better, worse = (c.arm_b, c.arm_a) if c.delta > 0 else (c.arm_a, c.arm_b)
            where = f"{name}: " if with_dataset else ""
            yield f"{where}{better} > {worse} ({abs(c.delta):+.3f}, p={c.p_holm:.2g})"


def significance_line(results: RunResults) -> str | None:
    """ONE line naming the significant pairs (None when no pair was tested)."""
    tested = {name: _tests(ds) for name, ds in results.datasets.items() if _tests(ds)}
    if not tested:
        return None
    first = next(iter(tested.values()))[0]
    how = f"{first.test} test, {first.measure}, Holm, α={first.alpha:g}"
    pairs = [p for name, tests in tested.items() for p in _pairs(name, tests, len(results.datasets) > 1)]
    if not pairs:
        return f"no significant difference between arms ({how})"
    return f"{SIG_MARK} significant ({how}): " + "; ".join(pairs)


def print_results(
    results: RunResults, console: Console, *, wide: bool = False, run_dir: Path | None = None
) -> None:
    """The compact table and the line of significant pairs; ``wide``: every table of every dataset."""
    if wide:
        for name, ds in results.datasets.items():
            for table in dataset_tables(name, ds):
                print_table(table, console)
        return
    print_table(compact_table(results), console)
    line = significance_line(results)
    if line is not None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for name, ds in results.datasets.items():  # figures scored with other judgments than the dataset's say so
        if ds.judgments is not None:
            console.print(f"{name}: {judgments_line(ds)}", markup=False, highlight=False, soft_wrap=True)
    where = str(run_dir) if run_dir is not None else "RUN_DIR"
    console.print(
        f"every table (all measures, timings, tests, agreement): harness report {where}, or its report.md",
        markup=False,
        highlight=False,
        soft_wrap=True,
        style="dim",
    )
