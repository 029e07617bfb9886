"""``--tune-on kfold[:K]`` for the in-engine weighted sum (``hybrid-engine-sum``).

The sum's weights live in the search bodies, so a held-out choice means a search per fold:
for each of the sweep's seeded folds (:func:`harness.sweep.kfold_split`, the run's seed and K),
the weights are fitted with :func:`harness.eval.tune_sum_weights` on the other folds' queries
(from the lexical and vector runs already searched), and the held-out fold's queries are then
searched in the engine with them. The arm's run is the union of the folds' held-out runs:
every query ranked by weights chosen without it. Each fold's search is checkpointed under
``<split>/sum-kfold<K>-seed<S>/fold-<i>/``, so a rerun searches nothing again.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness._search import ArmRun
from harness.eval import PRIMARY_MEASURE, tune_sum_weights
from harness.sweep import kfold_folds, kfold_split
from indexer import BM25_PARAMS, Dataset

if TYPE_CHECKING:
    from harness.run._execute import Executor
    from harness.run._plan import DatasetPlan

Weights = tuple[float, float]


def _restrict(run: dict[str, dict[str, float]], qids: set[str]) -> dict[str, dict[str, float]]:
    return {q: docs for q, docs in run.items() if q in qids}


def union_runs(parts: list[ArmRun]) -> ArmRun:
    """One arm's run from disjoint per-fold runs (their passes' wall times and retries added)."""
    run, took, client = {}, {}, {}
    for part in parts:
        run.update(part.run)
        took.update(part.took_ms)
        client.update(part.client_ms)
    return ArmRun(
        run=dict(sorted(run.items())),
        took_ms=took,
        client_ms=client,
        wall_s=sum(p.wall_s for p in parts),
        retries=sum(p.retries for p in parts),
    )


def fold_weights(
    executor: Executor, ds: Dataset, lexical: ArmRun, vector: ArmRun, folds: int, seed: int
) -> list[tuple[list[str], list[str], Weights]]:
    """(choose, held out, weights fitted on choose) for each of the K seeded folds of ``ds``'s queries."""
    k1 = BM25_PARAMS[executor.config.bm25][0]
    scale = executor.backend.bm25_scale(k1)
    out = []
    for choose, held in kfold_folds(kfold_split(sorted(ds.queries), folds, seed)):
        keep = set(choose)
        weights = tune_sum_weights(
            {q: ds.qrels[q] for q in choose if q in ds.qrels},
            _restrict(lexical.run, keep),
            _restrict(vector.run, keep),
            lexical_scale=scale,
            metric=PRIMARY_MEASURE.key,
        )
        out.append((choose, held, weights))
    return out


def kfold_sum_runs(
    executor: Executor, dsplan: DatasetPlan, index: str, runs: dict[str, ArmRun], ckpt: Path
) -> tuple[dict[str, ArmRun], tuple[Weights, ...]]:
    """The weighted arms' held-out runs (union over folds) and each fold's weights, in fold order."""
    cfg, ds = executor.config, dsplan.dataset
    assert cfg.tuning is not None and cfg.tuning.folds is not None
    fused = next(a for a in dsplan.fused_arms if a.expansion is None)
    lexical, vector = (runs[name] for name in fused.inputs)
    folder = ckpt / f"sum-kfold{cfg.tuning.folds}-seed{cfg.seed}"
    parts: dict[str, list[ArmRun]] = {arm.name: [] for arm in dsplan.weighted_arms}
    chosen = []
    splits = fold_weights(executor, ds, lexical, vector, cfg.tuning.folds, cfg.seed)
    for i, (choose, held, weights) in enumerate(splits):
        queries = {q: ds.queries[q] for q in held}
        subset = replace(ds, queries=queries, qrels={q: ds.qrels[q] for q in held if q in ds.qrels})
        found = executor.search_checkpointed(
            subset, index, dsplan.weighted_arms, folder / f"fold-{i + 1}", weights
        )
        for name, result in found.items():
            parts[name].append(result)
        chosen.append(weights)
        executor.console.print(
            f"in-engine sum weights of fold {i + 1}/{cfg.tuning.folds} on {ds.name} (chosen on the other "
            f"{len(choose)} queries, {len(held)} held out): lexical {weights[0]:g}, vector {weights[1]:g} "
            "(BM25 in Elasticsearch units)",
            highlight=False,
        )
    return {name: union_runs(p) for name, p in parts.items()}, tuple(chosen)
