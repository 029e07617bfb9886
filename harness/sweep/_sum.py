"""The in-engine weighted sum's (lexical, vector) weights as a sweep provider.

The engine sums raw scores, ``w_lexical * BM25 + w_vector * kNN``: only the weights' ratio changes the
ranking, so the choices are the lexical/vector ratios of :data:`~harness.eval.RATIOS` (a log grid), each
simulated on the client from the lexical and vector runs (BM25 in Elasticsearch's units:
``SumGrid.lexical_scale``) and scored per query like any configuration. The weights live in the search
bodies, so what a choice scores held out comes from the engine: the held-out queries searched with the
weights chosen without them (:func:`held_out_weights`, the caller's ``search``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from base import ConfigError
from harness._search import ArmRun
from harness.eval import PRIMARY_MEASURE, RATIOS, Run, evaluate, weighted_sum_run
from harness.sweep._configs import FUSION_STAGE, PROVIDERS, Choice, RunSet, SweepContext
from harness.sweep._heldout import TuneOn, best, kfold_folds, kfold_split
from indexer import Dataset

Weights = tuple[float, float]
SUM = "sum"


@dataclass(frozen=True, slots=True)
class SumGrid:
    """The ratios tried, and the factor that puts the engine's BM25 in Elasticsearch's units."""

    lexical_scale: float = 1.0
    ratios: tuple[float, ...] = RATIOS


@dataclass(frozen=True, slots=True)
class SumChoice:
    """One lexical/vector ratio and the weights (summing to 1) it stands for."""

    ratio: float

    @property
    def weights(self) -> Weights:
        return (round(self.ratio / (1 + self.ratio), 6), round(1 / (1 + self.ratio), 6))


class SumProvider:
    """Each choice simulates the in-engine sum of the context's two inputs (lexical, vector) on the client."""

    name = SUM
    stage = FUSION_STAGE

    def choices(self, spec: object, ctx: SweepContext) -> Sequence[Choice]:
        if not isinstance(spec, SumGrid):
            raise ConfigError(f"the sum sweep expects a SumGrid, found {type(spec).__name__}")
        if len(ctx.inputs) != 2:
            raise ConfigError(
                f"the in-engine sum weighs a lexical and a vector arm, found {list(ctx.inputs)}"
            )
        return [Choice(self.name, repr(r), (SumChoice(r), spec.lexical_scale)) for r in spec.ratios]

    def apply(self, value: object, ctx: SweepContext, runs: RunSet) -> dict[str, Run]:
        assert isinstance(value, tuple)
        choice, scale = value
        lexical, vector = (runs[name] for name in ctx.inputs)
        return {ctx.output: weighted_sum_run(lexical, vector, (choice.ratio, 1.0), scale)}


PROVIDERS[SumProvider.name] = SumProvider()


def _matrix(
    grid: SumGrid, ctx: SweepContext, runs: RunSet, qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, dict[str, float]]:
    """``{ratio: {qid: primary measure}}`` of every ratio's simulated sum."""
    provider = PROVIDERS[SUM]
    if not all(runs[name] for name in ctx.inputs):
        raise ConfigError("tuning the in-engine sum needs both the lexical and the vector run to choose on")
    out = {}
    for choice in provider.choices(grid, ctx):
        run = provider.apply(choice.value, ctx, runs)[ctx.output]
        out[choice.label] = evaluate(qrels, run, [PRIMARY_MEASURE]).per_query[PRIMARY_MEASURE.key]
    return out


def choose_weights(
    grid: SumGrid, ctx: SweepContext, runs: RunSet, ds: Dataset, qids: Sequence[str]
) -> Weights:
    """The weights whose simulated sum scores best over the judged ones of ``qids`` (the smaller ratio on ties)."""
    keep = set(qids)
    restricted = {name: {q: d for q, d in runs[name].items() if q in keep} for name in ctx.inputs}
    matrix = _matrix(grid, ctx, restricted, {q: ds.qrels[q] for q in qids if q in ds.qrels})
    label, _ = best(matrix, sorted(next(iter(matrix.values()))))
    return SumChoice(float(label)).weights


@dataclass(frozen=True, slots=True)
class HeldOutWeights:
    """The weighted arms' held-out runs (union over folds) and each fold's weights, in fold order."""

    runs: dict[str, ArmRun]
    folds: tuple[tuple[Weights, int, int], ...]  # (weights, queries chosen on, queries held out)


def union_runs(parts: Sequence[ArmRun]) -> ArmRun:
    """One arm's run from disjoint per-fold runs (their passes' wall times and retries added)."""
    run: dict[str, dict[str, float]] = {}
    took: dict[str, float] = {}
    client: dict[str, float] = {}
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


#: searches the weighted arms on a dataset's queries with weights; ``fold`` (1-based) names its checkpoint
WeightedSearch = Callable[[Dataset, Weights, int], Mapping[str, ArmRun]]


def held_out_weights(
    grid: SumGrid,
    ctx: SweepContext,
    runs: RunSet,
    ds: Dataset,
    tune: TuneOn,
    seed: int,
    search: WeightedSearch,
) -> HeldOutWeights:
    """k-fold: for each seeded fold, weights chosen on the other folds' queries, the fold searched with them."""
    assert tune.folds is not None
    parts: dict[str, list[ArmRun]] = {}
    folds = []
    for i, (choose, held) in enumerate(kfold_folds(kfold_split(sorted(ds.queries), tune.folds, seed))):
        weights = choose_weights(grid, ctx, runs, ds, choose)
        subset = replace(
            ds,
            queries={q: ds.queries[q] for q in held},
            qrels={q: ds.qrels[q] for q in held if q in ds.qrels},
        )
        for name, found in search(subset, weights, i + 1).items():
            parts.setdefault(name, []).append(found)
        folds.append((weights, len(choose), len(held)))
    return HeldOutWeights({name: union_runs(p) for name, p in parts.items()}, tuple(folds))
