"""`harness compare`: paired tests between arms of different run directories (through the typed results)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from harness.eval import Comparison, compare_arms
from harness.results import RESULTS_FILE, RunResults, load_per_query
from indexer import ConfigError


def _check_fingerprints(runs: list[tuple[Path, RunResults]]) -> None:
    seen: dict[str, tuple[str, Path]] = {}
    for run_dir, results in runs:
        for dataset, ds in results.datasets.items():
            if dataset in seen and seen[dataset][0] != ds.fingerprint:
                raise ConfigError(
                    f"{run_dir} evaluated {dataset} with data fingerprint {ds.fingerprint}, but {seen[dataset][1]} "
                    f"used {seen[dataset][0]}: runs over different data cannot be compared"
                )
            seen.setdefault(dataset, (ds.fingerprint, run_dir))


def compare_runs(
    run_dirs: list[Path], *, test: str = "randomization", measure: str = "ndcg@10", alpha: float = 0.05
) -> list[Comparison]:
    """Every arm of each run against the same arm of each later run, on the datasets all runs share."""
    if len(run_dirs) < 2:
        raise ConfigError(f"expected at least two run directories to compare, found {len(run_dirs)}")
    for run_dir in run_dirs:
        if not (run_dir / RESULTS_FILE).is_file():
            raise ConfigError(
                f"{run_dir} is not a finished run directory (expected {run_dir / RESULTS_FILE})"
            )
    runs = [(d, RunResults.load(d)) for d in run_dirs]
    _check_fingerprints(runs)
    per_query: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    labels: list[list[str]] = []
    for run_dir, results in runs:
        tag = results.manifest.run_id
        rows = load_per_query(run_dir)
        if not rows:
            raise ConfigError(f"{run_dir} has no per-query scores (per_query.jsonl)")
        for row in rows:
            per_query[row.dataset][f"{tag}:{row.arm}"][row.qid] = float(row.metrics[measure])
        labels.append(list(dict.fromkeys(f"{tag}:{row.arm}" for row in rows)))
    shared = set.intersection(*(set(r.datasets) for _, r in runs))
    if not shared:
        listing = "; ".join(f"{d}: {sorted(per_query[d])[:3]}" for d in sorted(per_query))
        raise ConfigError(f"the runs share no dataset: {listing}")
    pairs = [
        (a, b)
        for i, first in enumerate(labels)
        for second in labels[i + 1 :]
        for a in first
        for b in second
        if a.split(":", 1)[1] == b.split(":", 1)[1]
    ] or [(labels[0][0], labels[1][0])]
    scoped = {d: dict(v) for d, v in per_query.items() if d in shared}
    return compare_arms(scoped, pairs, measure=measure, test=test, alpha=alpha)
