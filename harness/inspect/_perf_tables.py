"""Tables of the performance phases: every arm's load phase in full, and the ANN sweep."""

from __future__ import annotations

from base import slug
from harness.inspect._judgments import agreement_tables
from harness.inspect._overlap import overlap_table
from harness.inspect._sweep_table import sweep_table
from harness.inspect._table import Cell, Column, Table
from harness.inspect._tables import arm_table, significance_table
from harness.results import AnnSweep, DatasetResult, Distribution


def _ms(d: Distribution) -> str:
    return f"{d.p50:.1f}/{d.p90:.1f}/{d.p99:.1f}/{d.p99_9:.1f}/{d.max:.1f}"


def load_table(name: str, ds: DatasetResult) -> Table | None:
    """Every arm's load phase: Rally's service time and latency percentiles, throughput, errors, took."""
    loaded = {arm: r.load for arm, r in ds.arms.items() if r.load is not None}
    if not loaded:
        return None
    headers = (
        "arm",
        "operation",
        "clients",
        "target/s",
        "requests",
        "errors",
        "req/s",
        "service ms p50/p90/p99/p99.9/max",
        "latency ms p50/p90/p99/p99.9/max",
        "took ms p50/p99",
        "client cpu ms p50",
    )
    rows = []
    for arm, load in loaded.items():
        errors = f"{load.errors} ({100 * load.error_rate:.1f}%)"
        if load.error_types:
            errors += " " + ", ".join(f"{k}: {v}" for k, v in sorted(load.error_types.items()))
        rows.append(
            (
                Cell(arm),
                Cell(load.operation),
                Cell(str(load.clients)),
                Cell(f"{load.target_throughput:g}" if load.target_throughput else "–"),
                Cell(str(load.requests)),
                Cell(errors),
                Cell(f"{load.throughput:.1f}"),
                Cell(_ms(load.service_time_ms)),
                Cell(_ms(load.latency_ms)),
                Cell(f"{load.took_ms.p50:.1f}/{load.took_ms.p99:.1f}"),
                Cell(f"{load.client_cpu_ms.p50:.2f}"),
            )
        )
    notes = tuple(f"{arm}: {load.note}" for arm, load in loaded.items() if load.note)
    return Table(
        title=f"{name}: load phase (single requests, one per query)",
        columns=tuple(Column(h, "left" if i < 2 else "right") for i, h in enumerate(headers)),
        rows=tuple(rows),
        key=f"load-{slug(name, fallback='x')}",
        notes=(
            *notes,
            "service = request handed to the client until its answer is parsed; latency = from the "
            "scheduled start (equal to service time without a target throughput); distributions over "
            "successful requests; client cpu = the sending thread's CPU per request (the harness's overhead).",
        ),
    )


def ann_sweep_table(name: str, sweep: AnnSweep) -> Table:
    """Every sweep point: recall@k, nDCG@10, service time p50/p99 from its load phase, index size."""
    s = sweep.settings
    headers = (
        "index type",
        s.parameter,
        f"recall@{s.k}",
        "nDCG@10",
        "svc ms p50",
        "svc ms p99",
        "req/s",
        "size MB",
        "frontier",
    )
    rows = tuple(
        (
            Cell(p.index_type),
            Cell(str(p.candidates) if p.candidates is not None else "exact"),
            Cell(f"{p.recall_at_k:.4f}"),
            Cell(f"{p.ndcg_at_10:.4f}"),
            Cell(f"{p.service_time_ms.p50:.2f}"),
            Cell(f"{p.service_time_ms.p99:.2f}"),
            Cell(f"{p.throughput:.1f}"),
            Cell(f"{p.size_bytes / 1e6:.1f}"),
            Cell("✓" if p.frontier else ""),
        )
        for p in sweep.points
    )
    return Table(
        title=f"{name}: ANN sweep ({sweep.documents} documents, {sweep.queries} queries, k={s.k})",
        columns=tuple(Column(h, "left" if i == 0 else "right") for i, h in enumerate(headers)),
        rows=rows,
        key=f"ann-{slug(name, fallback='x')}",
        notes=(
            f"recall@{s.k} against exact nearest neighbours ({sweep.exact}); every index built from the "
            f"same vectors (sha256 {sweep.vectors_sha256[:12]}), force-merged to one segment; ✓ = on the "
            "recall-latency frontier (no other point has higher recall at a lower service time p50).",
        ),
    )


def dataset_tables(name: str, ds: DatasetResult) -> list[Table]:
    """What the terminal prints for one dataset: arms, load phase and ANN sweep (when measured), tests,
    and how much the tested pairs agree (overlap@k, RBO)."""
    tables = [arm_table(name, ds)]
    swept = sweep_table(name, ds)
    if swept is not None:
        tables.append(swept)
    loads = load_table(name, ds)
    if loads is not None:
        tables.append(loads)
    if ds.ann_sweep is not None:
        tables.append(ann_sweep_table(name, ds.ann_sweep))
    if ds.significance:
        tables.append(significance_table(name, ds.significance))
    if ds.overlap:
        tables.append(overlap_table(name, ds.overlap))
    return [*tables, *agreement_tables(name, ds.judgments.judge if ds.judgments else None)]
