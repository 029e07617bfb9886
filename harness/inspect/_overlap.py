"""The agreement table: how much two arms' rankings overlap (overlap@k, RBO), no judgments needed."""

from __future__ import annotations

from collections.abc import Sequence

from base import slug
from harness.inspect._table import Cell, Column, Table
from harness.results import Overlap

OVERLAP_NOTE = (
    "Agreement without judgments: overlap@k = Jaccard similarity of the two top-k document sets; "
    "RBO = rank-biased overlap, the extrapolated RBO_ext of Webber, Moffat & Zobel (2010, eq. 32) at "
    "persistence p (top-weighted: at p=0.9 the first 10 ranks carry 86% of the weight); 1 = the same "
    "ranking, 0 = nothing shared. changed = queries whose top-k set differs. Means over the queries "
    "either arm returned results for."
)


def _row(o: Overlap, with_dataset: bool) -> tuple[Cell, ...]:
    cells = (
        Cell(f"{o.arm_b} vs {o.arm_a}"),
        Cell(str(o.queries)),
        Cell(f"{o.overlap:.4f}"),
        Cell(f"{o.rbo:.4f}"),
        Cell(f"{o.changed} ({100 * o.changed / o.queries:.0f}%)" if o.queries else "0"),
    )
    return (Cell(o.dataset), *cells) if with_dataset else cells


def overlap_table(
    name: str, overlaps: Sequence[Overlap], *, title: str = "", with_dataset: bool = False
) -> Table:
    """One row per pair: the queries compared, mean overlap@k, mean RBO_ext and the queries whose top k changed."""
    k = overlaps[0].k if overlaps else 10
    p = overlaps[0].p if overlaps else 0.9
    headers = ("pair (B vs A)", "queries", f"overlap@{k}", f"RBO (p={p:g})", f"top-{k} changed")
    columns = tuple(Column(h, "left" if i == 0 else "right") for i, h in enumerate(headers))
    return Table(
        title=title or f"{name}: agreement between arms (no judgments)",
        columns=((Column("dataset", "left"), *columns) if with_dataset else columns),
        rows=tuple(_row(o, with_dataset) for o in overlaps),
        key=f"overlap-{slug(name, fallback='x')}",
        notes=(OVERLAP_NOTE,),
    )
