"""ANN quality: recall of approximate kNN against exact search, and the recall-latency sweep.

* :mod:`._exact`: the cached document vectors, exact top-k on the client, tie-aware recall;
* :mod:`._options`: :class:`SweepOptions` (``--ann-sweep``), resolved against the probe;
* :mod:`._sweep`: sweep indices built from the same vectors, one point per (type, candidates).
"""

from harness.ann._exact import (
    TIE_EPS,
    DocumentVectors,
    ExactNeighbours,
    ann_recall,
    document_vectors,
    exact_top_k,
    recall_at,
)
from harness.ann._options import DEFAULT_CANDIDATES, DEFAULT_TYPES, SweepOptions, is_exact
from harness.ann._sweep import (
    FIELD,
    SWEEP_PREFIX,
    SweepInputs,
    ensure_index,
    mark_frontier,
    run_sweep,
    sweep_index_name,
)

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_TYPES",
    "FIELD",
    "SWEEP_PREFIX",
    "TIE_EPS",
    "DocumentVectors",
    "ExactNeighbours",
    "SweepInputs",
    "SweepOptions",
    "ann_recall",
    "document_vectors",
    "ensure_index",
    "exact_top_k",
    "is_exact",
    "mark_frontier",
    "recall_at",
    "run_sweep",
    "sweep_index_name",
]
