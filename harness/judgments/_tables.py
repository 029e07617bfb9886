"""The tables ``harness pool`` and ``harness rescore`` print (drawn by the one table model)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.inspect import Cell, Column, Table, fmt
from harness.judgments._pool import DatasetPool
from harness.results import DatasetResult

#: measures shown before and after a re-score
RESCORE_MEASURES = ("ndcg@10", "ndcg_judged@10", "unjudged@10", "ndcg@100", "recall@100")


def pool_table(pools: Sequence[DatasetPool]) -> Table:
    """Per dataset and arm: pairs in the top ``depth``, how many are unjudged; then the pooled total."""
    rows: list[tuple[Cell, ...]] = []
    for pool in pools:
        for arm in pool.per_arm:
            share = arm.unjudged / arm.pairs if arm.pairs else 0.0
            rows.append(
                (
                    Cell(pool.dataset.name),
                    Cell(arm.arm),
                    Cell(str(arm.pairs)),
                    Cell(str(arm.unjudged)),
                    Cell(f"{share:.1%}"),
                )
            )
        rows.append(
            (
                Cell(pool.dataset.name),
                Cell("pool (union)", dim=True),
                Cell(""),
                Cell(str(len(pool.entries))),
                Cell(""),
            )
        )
    depth = pools[0].depth if pools else 0
    columns = (
        Column("dataset", "left"),
        Column("arm", "left"),
        Column(f"pairs in top {depth}"),
        Column("unjudged"),
        Column("share"),
    )
    return Table(title=f"unjudged pairs in the top {depth}", columns=columns, rows=tuple(rows), key="pool")


def rescore_table(name: str, before: DatasetResult, after: DatasetResult) -> Table:
    """Each arm's scores with the run's judgments and with the new ones."""
    rows: list[tuple[Cell, ...]] = []
    for arm, new in after.arms.items():
        old = before.arms.get(arm)
        for measure in RESCORE_MEASURES:
            a, b = (old.metric(measure) if old else None), new.metric(measure)
            delta = f"{b - a:+.4f}" if a is not None and b is not None else "–"
            rows.append((Cell(arm), Cell(measure), Cell(fmt(a)), Cell(fmt(b)), Cell(delta)))
    columns = (
        Column("arm", "left"),
        Column("measure", "left"),
        Column("before"),
        Column("after"),
        Column("Δ"),
    )
    return Table(
        title=f"{name}: re-scored without re-querying",
        columns=columns,
        rows=tuple(rows),
        key=f"rescore-{name}",
    )
