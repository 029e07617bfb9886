"""Published baselines beside a run: the R2MED paper's rows the run recorded (``results.json`` ``paper``)
and the packaged BEIR figures (``harness/resources/published_baselines.json``) for the datasets they fit.

The BEIR figures are looked up when a report is drawn, from the dataset's name, split and fingerprint in
the manifest, so a run directory written before they were packaged shows them too.
"""

from __future__ import annotations

from harness._paper import PublishedBaseline, published_baselines, r2med_source
from harness.inspect._table import Cell, Column, Table
from harness.inspect._tables import fmt
from harness.results import RunResults


def run_baselines(results: RunResults) -> dict[str, list[PublishedBaseline]]:
    """Each dataset's published baselines: what the run recorded first, then the packaged ones it lacks."""
    out: dict[str, list[PublishedBaseline]] = {}
    for name, ds in results.datasets.items():
        recorded = [
            PublishedBaseline(label, p.system, p.score, r2med_source()) for label, p in ds.paper.items()
        ]
        info = results.manifest.datasets.get(name)
        split, fingerprint = (info.split, info.fingerprint) if info is not None else (None, {})
        looked_up = [b for b in published_baselines(name, split, fingerprint) if b.label not in ds.paper]
        if recorded or looked_up:
            out[name] = recorded + looked_up
    return out


def baselines_table(results: RunResults) -> Table:
    """Every published baseline of the run's datasets: its score, the system, and where it comes from."""
    found = run_baselines(results)
    sources = list(dict.fromkeys(b.source for rows in found.values() for b in rows))
    rows = tuple(
        (
            Cell(name),
            Cell(b.label),
            Cell(fmt(b.score, 3 if round(b.score, 3) == b.score else 4)),
            Cell(b.system),
            Cell(f"[{sources.index(b.source) + 1}]"),
        )
        for name, rows in found.items()
        for b in rows
    )
    columns = (
        Column("dataset", "left"),
        Column("baseline", "left"),
        Column("nDCG@10"),
        Column("system", "left"),
        Column("source", "left"),
    )
    return Table(
        title="Published baselines (nDCG@10)",
        columns=columns,
        rows=rows,
        key="paper-baselines",
        notes=tuple(f"[{i}] {s}" for i, s in enumerate(sources, 1)),
    )
