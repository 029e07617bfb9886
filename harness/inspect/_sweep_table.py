"""The table of a held-out sweep (``--tune-on``): the score to report, the optimistic one, the folds."""

from __future__ import annotations

from base import slug
from harness.inspect._table import Cell, Column, Table
from harness.results import DatasetResult, HeldOutSweep

SWEEP_NOTE = (
    "held-out: every query scored by the configuration chosen without it (the arm's score in the table "
    "above, with its 95% bootstrap CI). in-sample best: the best configuration chosen and scored on the "
    "same queries; optimistic, shown only to measure the gap."
)


def _config(chosen: dict[str, str]) -> str:
    return " ".join(v if k == "fusion" else f"{k}:{v}" for k, v in chosen.items())


def sweep_table(name: str, ds: DatasetResult) -> Table | None:
    """The swept arm's held-out score and CI, the in-sample best, and each fold's choice; None without."""
    sweep: HeldOutSweep | None = ds.sweep
    if sweep is None:
        return None
    c = sweep.choices
    rows = [
        (
            Cell("held-out (reported)"),
            Cell(f"{sweep.held_out:.4f}", aside=f"[{sweep.ci95[0]:.3f},{sweep.ci95[1]:.3f}]"),
            Cell(""),
            Cell(str(sum(f.held_out_queries for f in c.folds))),
            Cell("chosen per fold, below" if len(c.folds) > 1 else _config(c.folds[0].chosen)),
        ),
        (
            Cell("in-sample best (optimistic)", dim=True),
            Cell(f"{sweep.in_sample_best:.4f}", dim=True),
            Cell("", dim=True),
            Cell("", dim=True),
            Cell(_config(sweep.in_sample_config), dim=True),
        ),
    ]
    kfold = len(c.folds) > 1 or c.tune_on.startswith("kfold")
    for f in c.folds:
        rows.append(
            (
                Cell(f"fold {f.fold}" if kfold else f"chosen on {c.tune_on}"),
                Cell(f"{f.held_out_score:.4f}"),
                Cell(f"{f.choose_score:.4f} ({f.choose_queries} q)"),
                Cell(str(f.held_out_queries)),
                Cell(_config(f.chosen)),
            )
        )
    columns = (
        Column(sweep.arm, "left"),
        Column(f"{sweep.measure} held out"),
        Column("where chosen"),
        Column("queries"),
        Column("configuration", "left"),
    )
    return Table(
        title=f"{name}: sweep of {sweep.arm}, {c.configurations} configurations, {c.tune_on} (grid {c.grid})",
        columns=columns,
        rows=tuple(rows),
        key=f"sweep-{slug(name, fallback='x')}",
        notes=(SWEEP_NOTE,),
    )
