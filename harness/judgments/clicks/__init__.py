"""Judgments from clicks: User Behavior Insights logs in, graded (query, document) pairs out.

* :class:`UbiSource` (where the log is: JSON-lines exports or a cluster's ``ubi_queries`` /
  ``ubi_events``) and :class:`ClickModelSpec` (model, max rank, date window, minimum impressions,
  grade cut points): tables of keys (``judgments.*``), checked by their declarations.
* :func:`read_log` reads the log; :func:`judge_clicks` runs a click model (:data:`CLICK_MODELS`:
  ``coec``, clicks over expected clicks; ``ctr``, raw click-through rate) -> :class:`ClickJudgments`;
  :func:`rated` turns them into ``RatedPair`` s for ``indexer.write_judgments``.
* :func:`query_frequencies`, :func:`sample_queries` (random, pps, top; seeded), :func:`query_ids`.
* :func:`simulate`: a seeded position-based-model log over a judged dataset, to test all of the
  above; :func:`agreement`: kappa and tau of click judgments against qrels.
"""

from harness.judgments.clicks._agreement import (
    ClickAgreement,
    SystemAgreement,
    agreement,
    click_qrels,
    graded_tau,
    system_agreement,
)
from harness.judgments.clicks._judge import from_log, left_out, rated, read_log
from harness.judgments.clicks._models import CLICK_MODELS, ClickJudgment, ClickJudgments, judge_clicks
from harness.judgments.clicks._observe import Observations, observe
from harness.judgments.clicks._querysets import (
    SAMPLE_METHODS,
    QuerySet,
    QuerySetSpec,
    SampledQuery,
    query_frequencies,
    query_ids,
    sample_queries,
)
from harness.judgments.clicks._report import agreement_lines, judgment_lines, query_set_lines, summary
from harness.judgments.clicks._simulate import (
    IMPRESSION_MODES,
    SYSTEM_WEIGHTS,
    Simulation,
    SimulationSpec,
    simulate,
    systems,
    write_simulation,
)
from harness.judgments.clicks._spec import MODEL_NAMES, ClickModelSpec, UbiSource

__all__ = [
    "CLICK_MODELS",
    "IMPRESSION_MODES",
    "MODEL_NAMES",
    "SAMPLE_METHODS",
    "SYSTEM_WEIGHTS",
    "ClickAgreement",
    "ClickJudgment",
    "ClickJudgments",
    "ClickModelSpec",
    "Observations",
    "QuerySet",
    "QuerySetSpec",
    "SampledQuery",
    "Simulation",
    "SimulationSpec",
    "SystemAgreement",
    "UbiSource",
    "agreement",
    "agreement_lines",
    "click_qrels",
    "from_log",
    "graded_tau",
    "judge_clicks",
    "judgment_lines",
    "left_out",
    "observe",
    "query_frequencies",
    "query_ids",
    "query_set_lines",
    "rated",
    "read_log",
    "sample_queries",
    "simulate",
    "summary",
    "system_agreement",
    "systems",
    "write_simulation",
]
