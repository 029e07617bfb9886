"""`harness compare`: paired tests between arms of different run directories."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.table import Table

from harness.eval import compare_arms
from harness.inspect import load_per_query, load_results
from indexer import ConfigError


def compare_runs(
    run_dirs: list[Path], *, test: str = "randomization", measure: str = "ndcg@10", alpha: float = 0.05
) -> tuple[Table, list[dict[str, Any]]]:
    if len(run_dirs) < 2:
        raise ConfigError(f"compare needs at least two run directories, found {len(run_dirs)}")
    fingerprints: dict[str, tuple[str, Path]] = {}
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    labels: list[list[str]] = []
    for run_dir in run_dirs:
        if not (run_dir / "results.json").is_file():
            raise ConfigError(
                f"{run_dir} is not a finished run directory (expected {run_dir / 'results.json'})"
            )
        results = load_results(run_dir)
        tag = results.get("manifest", {}).get("run_id", run_dir.name)
        arms_here = []
        for dataset, data in results["datasets"].items():
            fp = data.get("fingerprint")
            if dataset in fingerprints and fingerprints[dataset][0] != fp:
                raise ConfigError(
                    f"{run_dir} evaluated {dataset} with data fingerprint {fp}, but {fingerprints[dataset][1]} "
                    f"used {fingerprints[dataset][0]}: runs over different data cannot be compared"
                )
            fingerprints.setdefault(dataset, (fp, run_dir))
        for row in load_per_query(run_dir):
            arm = f"{tag}:{row['arm']}"
            per_query.setdefault(row["dataset"], {}).setdefault(arm, {})[row["qid"]] = float(
                row["metrics"][measure]
            )
            if arm not in arms_here:
                arms_here.append(arm)
        labels.append(arms_here)
    shared = set(fingerprints)
    for run_dir, arms in zip(run_dirs, labels, strict=True):
        datasets = {d for d, by_arm in per_query.items() if any(a in by_arm for a in arms)}
        shared &= datasets
        if not datasets:
            raise ConfigError(f"{run_dir} has no per-query scores")
    if not shared:
        raise ConfigError(
            "the runs share no dataset: "
            + "; ".join(f"{d}: {sorted(per_query.get(d, {}))[:3]}" for d in sorted(fingerprints))
        )
    per_query = {d: v for d, v in per_query.items() if d in shared}
    pairs = [
        (a, b)
        for i, first in enumerate(labels)
        for second in labels[i + 1 :]
        for a in first
        for b in second
        if a.split(":", 1)[1] == b.split(":", 1)[1]
    ]
    if not pairs:
        pairs = [(labels[0][0], labels[1][0])]
    comparisons = compare_arms(per_query, pairs, measure=measure, test=test, alpha=alpha)
    table = Table(title=f"{measure}: paired {test} tests, Holm-corrected over {len(comparisons)} comparisons")
    for col in ("dataset", "A", "B", "mean A", "mean B", "Δ (B−A)", "p", "p (Holm)", ""):
        table.add_column(col)
    rows = []
    for c in comparisons:
        table.add_row(
            c.dataset,
            c.arm_a,
            c.arm_b,
            f"{c.mean_a:.4f}",
            f"{c.mean_b:.4f}",
            f"{c.delta:+.4f}",
            f"{c.p_value:.3g}",
            f"{c.p_holm:.3g}",
            "significant" if c.significant else "",
        )
        rows.append(asdict(c))
    return table, rows
