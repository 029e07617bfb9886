"""Held-out selection: choose a configuration on some queries, score it on others.

Two protocols, parsed from ``sweep.tune_on`` (``--tune-on``) by :func:`parse_tune_on`:

* ``train`` (any split name): choose on that split's queries, score on the evaluation split;
* ``kfold`` / ``kfold:K`` (default 5): the evaluation queries split into K folds (seeded); for
  each fold, the configuration with the best mean on the other folds scores that fold.

Either way every evaluated query is scored by a configuration chosen without it, and the
reported score is the mean over all those queries. The configuration with the best mean on the
evaluated queries themselves is reported too, as the *in-sample best*: it is optimistic (chosen
and scored on the same queries), and the gap between the two is the overfitting a sweep buys.

Configurations are scored per query once (a fusion of one query never depends on another
query), so K folds cost the selection only sums over a score matrix, not K more sweeps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from base import ConfigError

KFOLD = "kfold"
DEFAULT_FOLDS = 5
#: two configurations whose means differ by less than this tie; the first in grid order wins
TIE_EPS = 1e-12

#: {configuration label: {qid: score}}, configurations in grid order
ScoreMatrix = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True, slots=True)
class TuneOn:
    """Where a sweep chooses: another split (``split``) or K folds of the evaluated queries."""

    split: str | None = None
    folds: int | None = None

    @property
    def is_kfold(self) -> bool:
        return self.folds is not None

    def __str__(self) -> str:
        return f"{KFOLD}:{self.folds}" if self.folds is not None else str(self.split)


def parse_tune_on(text: str) -> TuneOn:
    """``train`` (a split name), ``kfold`` or ``kfold:K`` (K >= 2)."""
    raw = text.strip()
    head, colon, tail = raw.partition(":")
    if head.lower() != KFOLD:
        if not raw or colon:
            raise ConfigError(f"expected SPLIT (e.g. train), kfold or kfold:K, found {text!r}")
        return TuneOn(split=raw)
    try:
        folds = int(tail) if colon else DEFAULT_FOLDS
    except ValueError:
        raise ConfigError(f"expected kfold:K with an integer K >= 2, found {text!r}") from None
    if folds < 2:
        raise ConfigError(f"expected kfold:K with K >= 2, found {text!r}")
    return TuneOn(folds=folds)


def kfold_split(qids: Sequence[str], k: int, seed: int) -> tuple[tuple[str, ...], ...]:
    """``k`` folds partitioning ``qids``: sorted, shuffled with ``seed``, dealt round robin.

    The same ids and seed give the same folds whatever order the ids come in; fold sizes differ
    by at most one; each fold is sorted.
    """
    ids = sorted(set(qids))
    if len(ids) != len(qids):
        raise ConfigError(f"k-fold split: {len(qids) - len(ids)} query ids are repeated")
    if not 2 <= k <= len(ids):
        raise ConfigError(f"expected kfold:K with 2 <= K <= {len(ids)} (the queries), found K={k}")
    order = np.random.default_rng(seed).permutation(len(ids))
    folds: list[list[str]] = [[] for _ in range(k)]
    for position, index in enumerate(order):
        folds[position % k].append(ids[int(index)])
    return tuple(tuple(sorted(f)) for f in folds)


@dataclass(frozen=True, slots=True)
class FoldChoice:
    """One fold: the configuration chosen on ``choose`` queries, and its score on the held-out ones."""

    fold: int
    chosen: str
    choose_queries: int
    held_out: tuple[str, ...]
    choose_score: float
    held_out_score: float


@dataclass(frozen=True, slots=True)
class Selection:
    """The held-out outcome of a sweep (see the module doc)."""

    folds: tuple[FoldChoice, ...]
    per_query: dict[str, float]
    """Each evaluated query's score under the configuration chosen without it."""
    held_out: float
    """Mean of :attr:`per_query`: the score to report."""
    in_sample_best: str
    in_sample_score: float
    """Best configuration on the evaluated queries themselves, and its mean there (optimistic)."""
    configurations: int


def _mean(scores: Mapping[str, float], qids: Sequence[str]) -> float:
    return math.fsum(scores[q] for q in qids) / len(qids)


def best(matrix: ScoreMatrix, qids: Sequence[str]) -> tuple[str, float]:
    """The configuration with the highest mean over ``qids`` (the first in grid order on ties)."""
    if not matrix or not qids:
        raise ConfigError("a sweep needs at least one configuration and one query to choose on")
    label, score = "", -math.inf
    for name, scores in matrix.items():
        mean = _mean(scores, qids)
        if mean > score + TIE_EPS:
            label, score = name, mean
    return label, score


def select(
    choose: ScoreMatrix, score: ScoreMatrix, folds: Sequence[tuple[Sequence[str], Sequence[str]]]
) -> Selection:
    """Choose on ``choose`` for each fold's first query set, score on ``score`` for its second.

    For k-fold both matrices are the same and a fold is (the other folds' queries, the fold); for
    a train split ``choose`` holds the train queries and there is one fold (all train, all test).
    The held-out sets must partition the evaluated queries (the keys of ``score``'s rows).
    """
    evaluated = sorted(next(iter(score.values())))
    held = [q for _, out in folds for q in out]
    if sorted(held) != evaluated:
        raise ConfigError("held-out folds must partition the evaluated queries, each exactly once")
    choices, per_query = [], {}
    for i, (inside, outside) in enumerate(folds):
        label, inside_score = best(choose, inside)
        choices.append(
            FoldChoice(i, label, len(inside), tuple(outside), inside_score, _mean(score[label], outside))
        )
        per_query.update({q: score[label][q] for q in outside})
    top, top_score = best(score, evaluated)
    return Selection(
        folds=tuple(choices),
        per_query=dict(sorted(per_query.items())),
        held_out=_mean(per_query, evaluated),
        in_sample_best=top,
        in_sample_score=top_score,
        configurations=len(score),
    )


def kfold_folds(folds: Sequence[Sequence[str]]) -> list[tuple[list[str], list[str]]]:
    """(choose, held out) pairs of a k-fold split: each fold held out, the others chosen on."""
    return [
        ([q for j, f in enumerate(folds) if j != i for q in f], list(fold)) for i, fold in enumerate(folds)
    ]
