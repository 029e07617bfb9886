"""Weights of an in-engine weighted sum (``hybrid-engine-sum``), tuned on a train split's runs.

The engine sums raw scores: ``w_lexical * BM25 + w_vector * kNN similarity``. Only the ratio
of the weights changes the ranking, and BM25 (tens) and a kNN similarity (0.5 to 1) live on
very different scales, so the ratio is searched on a logarithmic grid (client-side wsum's
grid of steps of 0.1 cannot express ratios like 1:30). Each candidate is simulated on the
client from the two arms' top-k runs (a document missing from one run counts 0 for it, as
in the engine for the kNN side), and scored on the train qrels; the best ratio wins, the
smaller one on ties. BM25 scores are given in Elasticsearch's units (``lexical_scale``:
the backend's ``bm25_scale``), so the weights mean the same on both engines.
"""

from __future__ import annotations

from collections.abc import Mapping

from base import ConfigError

from ._evaluate import evaluate
from ._measures import Measure
from ._types import QrelsLike, Run

#: lexical/vector ratios tried: 0, then 1e-3 .. 1e1 in 25 log steps (about x1.47 apart)
RATIOS: tuple[float, ...] = (0.0, *(round(10 ** (-3 + 4 * i / 24), 6) for i in range(25)))


def weighted_sum_run(
    lexical: Mapping[str, Mapping[str, float]],
    vector: Mapping[str, Mapping[str, float]],
    weights: tuple[float, float],
    lexical_scale: float = 1.0,
) -> Run:
    """``{qid: {doc: w_l * scale * bm25 + w_v * knn}}`` over the union of both runs' documents."""
    w_lex, w_vec = weights
    out: Run = {}
    for qid in sorted(set(lexical) | set(vector)):
        lex, vec = lexical.get(qid, {}), vector.get(qid, {})
        out[qid] = {
            doc: w_lex * lexical_scale * lex.get(doc, 0.0) + w_vec * vec.get(doc, 0.0)
            for doc in set(lex) | set(vec)
        }
    return out


def tune_sum_weights(
    qrels: QrelsLike,
    lexical: Mapping[str, Mapping[str, float]],
    vector: Mapping[str, Mapping[str, float]],
    *,
    lexical_scale: float = 1.0,
    metric: Measure | str = "ndcg@10",
) -> tuple[float, float]:
    """The (lexical, vector) weights, summing to 1, whose simulated sum scores best on ``qrels``."""
    measure = Measure.parse(metric)
    if not lexical or not vector:
        raise ConfigError(
            "tuning the in-engine sum needs both the lexical and the vector run of the train split"
        )
    best_ratio, best_score = 0.0, -1.0
    for ratio in RATIOS:
        run = weighted_sum_run(lexical, vector, (ratio, 1.0), lexical_scale)
        score = evaluate(qrels, run, [measure]).means[measure.key]
        if score > best_score + 1e-12:
            best_ratio, best_score = ratio, score
    return (round(best_ratio / (1 + best_ratio), 6), round(1 / (1 + best_ratio), 6))
