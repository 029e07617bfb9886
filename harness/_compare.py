"""`harness compare`: paired tests, and agreement without judgments, between arms of different run directories.

Paired tests read each run's ``per_query.jsonl``; agreement (overlap@k and RBO_ext, see
:mod:`harness.eval`) reads the rankings themselves, ``runs/<dataset>/<arm>.trec``, so it needs
no judgments: production against candidate, before anyone judges the candidate. Both pair every
arm of each run with the arm of the same name in each later run (or, when no name is shared, the
first arm of the first run with the first arm of the second).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from base import ConfigError
from harness.eval import OVERLAP_K, RBO_P, Comparison, Overlap, Rankings, compare_arms, compare_overlap
from harness.results import RESULTS_FILE, RunResults, load_per_query, load_ranking, trec_path


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


def _load_runs(run_dirs: Sequence[Path]) -> list[tuple[Path, RunResults]]:
    """The finished runs, checked: at least two, distinct run ids (arms are labelled ``run_id:arm``), same data."""
    if len(run_dirs) < 2:
        raise ConfigError(f"expected at least two run directories to compare, found {len(run_dirs)}")
    for run_dir in run_dirs:
        if not (run_dir / RESULTS_FILE).is_file():
            raise ConfigError(
                f"{run_dir} is not a finished run directory (expected {run_dir / RESULTS_FILE})"
            )
    runs = [(Path(d), RunResults.load(d)) for d in run_dirs]
    ids: dict[str, Path] = {}
    for run_dir, results in runs:
        tag = results.manifest.run_id
        if tag in ids:
            raise ConfigError(
                f"{ids[tag]} and {run_dir} have the same run id {tag!r}: expected distinct runs "
                "(their arms would share labels); rename one directory"
            )
        ids[tag] = run_dir
    _check_fingerprints(runs)
    return runs


def _same_arm_pairs(labels: list[list[str]]) -> list[tuple[str, str]]:
    """``run:arm`` of each run against the same arm of each later run; else the first arms of the first two runs."""
    return [
        (a, b)
        for i, first in enumerate(labels)
        for second in labels[i + 1 :]
        for a in first
        for b in second
        if a.split(":", 1)[1] == b.split(":", 1)[1]
    ] or [(labels[0][0], labels[1][0])]


def compare_runs(
    run_dirs: list[Path], *, test: str = "randomization", measure: str = "ndcg@10", alpha: float = 0.05
) -> list[Comparison]:
    """Every arm of each run against the same arm of each later run, on the datasets all runs share."""
    runs = _load_runs(run_dirs)
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
    scoped = {d: dict(v) for d, v in per_query.items() if d in shared}
    return compare_arms(scoped, _same_arm_pairs(labels), measure=measure, test=test, alpha=alpha)


def overlap_runs(run_dirs: list[Path], *, k: int = OVERLAP_K, p: float = RBO_P) -> list[Overlap]:
    """overlap@k and RBO_ext of the same pairs as :func:`compare_runs`, from the runs' TREC files."""
    runs = _load_runs(run_dirs)
    shared = sorted(set.intersection(*(set(r.datasets) for _, r in runs)))
    if not shared:
        listing = "; ".join(f"{d}: {', '.join(r.datasets)}" for d, r in runs)
        raise ConfigError(f"the runs share no dataset: {listing}")
    labels = [
        list(dict.fromkeys(f"{r.manifest.run_id}:{arm}" for d in shared for arm in r.datasets[d].arms))
        for _, r in runs
    ]
    pairs = _same_arm_pairs(labels)
    wanted = {label for pair in pairs for label in pair}
    ranked: dict[str, dict[str, Rankings]] = defaultdict(dict)
    for run_dir, results in runs:
        for dataset in shared:
            for arm in results.datasets[dataset].arms:
                label = f"{results.manifest.run_id}:{arm}"
                if label in wanted:
                    ranked[dataset][label] = load_ranking(trec_path(run_dir, dataset, arm))
    return [summary for summary, _ in compare_overlap(ranked, pairs, k=k, p=p)]
