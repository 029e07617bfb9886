"""Evaluation, fusion and statistics over runs ``{qid: {docid: score}}`` and qrels ``{qid: {docid: grade}}``.

Pure Python over ranx; no engine needed.

* Measures: :class:`Measure` (``Measure.parse("nDCG@10")``), :data:`DEFAULT_MEASURES`.
* Scoring: :func:`evaluate` -> :class:`Evaluation` (per-query scores and means), trec_eval's rules
  (relevance level, ``-c``); protocols by name (:data:`PROTOCOLS`: ``trec_eval``, ``r2med``).
* Ranking order, trec_eval's: :func:`rank`, :func:`sort_run`, :func:`top_k` (score desc, then doc id desc).
* Fusion: :class:`FusionSpec` (``FusionSpec.parse("wsum:weights=0.3/0.7")``),
  :func:`fuse`, :func:`optimize_fusion`.
* In-engine weighted sum: :func:`tune_sum_weights`, :func:`weighted_sum_run`.
* Agreement without judgments: :func:`overlap_at_k`, :func:`rbo` (RBO_ext), :func:`run_overlaps`,
  :func:`compare_overlap` -> :class:`Overlap` (means) and :class:`QueryOverlap` (per query).
* Agreement of labellers and of system orderings: :func:`cohen_kappa` -> :class:`Kappa` (binary or
  weighted, bootstrap interval), :func:`confusion`, :func:`fleiss_kappa`, :func:`kendall_tau`,
  :func:`spearman_rho`.
* Statistics: :func:`compare_arms` -> :class:`Comparison`, :func:`randomization_test`,
  :func:`paired_t_test`, :func:`holm`, :func:`bootstrap_ci`.
"""

from ._agreement import (
    KAPPA_WEIGHTS,
    Confusion,
    Kappa,
    cohen_kappa,
    confusion,
    fleiss_kappa,
    kendall_tau,
    spearman_rho,
)
from ._evaluate import Evaluation, check_qrels, evaluate
from ._fusion import (
    DEFAULT_FUSION,
    FUSION_METHODS,
    NORMALIZATIONS,
    PARAM_WEIGHTS,
    FusionMethod,
    FusionSpec,
    fuse,
    optimize_fusion,
)
from ._measures import DEFAULT_MEASURES, FAMILIES, PRIMARY_MEASURE, Measure, judged_only, parse_measures
from ._overlap import (
    OVERLAP_K,
    RBO_P,
    RBO_VARIANT,
    Overlap,
    QueryOverlap,
    Rankings,
    compare_overlap,
    overlap_at_k,
    query_overlaps,
    rankings,
    rbo,
    run_overlaps,
    summarize,
)
from ._protocol import DEFAULT_PROTOCOL, PROTOCOLS, Protocol, drop_query_ids, protocol
from ._stats import (
    STAT_TESTS,
    Comparison,
    ConfidenceInterval,
    bootstrap_ci,
    compare_arms,
    holm,
    paired_t_test,
    randomization_test,
)
from ._sum import RATIOS, tune_sum_weights, weighted_sum_run
from ._types import Qrels, Run, rank, sort_run, top_k
from ._warm import ranx_ready, warm_ranx

__all__ = [
    "DEFAULT_FUSION",
    "DEFAULT_MEASURES",
    "DEFAULT_PROTOCOL",
    "FAMILIES",
    "FUSION_METHODS",
    "KAPPA_WEIGHTS",
    "NORMALIZATIONS",
    "OVERLAP_K",
    "PARAM_WEIGHTS",
    "PRIMARY_MEASURE",
    "PROTOCOLS",
    "RATIOS",
    "RBO_P",
    "RBO_VARIANT",
    "STAT_TESTS",
    "Comparison",
    "ConfidenceInterval",
    "Confusion",
    "Evaluation",
    "FusionMethod",
    "FusionSpec",
    "Kappa",
    "Measure",
    "Overlap",
    "Protocol",
    "Qrels",
    "QueryOverlap",
    "Rankings",
    "Run",
    "bootstrap_ci",
    "check_qrels",
    "cohen_kappa",
    "compare_arms",
    "compare_overlap",
    "confusion",
    "drop_query_ids",
    "evaluate",
    "fleiss_kappa",
    "fuse",
    "holm",
    "judged_only",
    "kendall_tau",
    "optimize_fusion",
    "overlap_at_k",
    "paired_t_test",
    "parse_measures",
    "protocol",
    "query_overlaps",
    "randomization_test",
    "rank",
    "rankings",
    "ranx_ready",
    "rbo",
    "run_overlaps",
    "sort_run",
    "spearman_rho",
    "summarize",
    "top_k",
    "tune_sum_weights",
    "warm_ranx",
    "weighted_sum_run",
]
