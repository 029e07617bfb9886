"""CI gates: rules over a run's results (and a baseline's), with a verdict CI systems can read.

* Rules (:func:`parse_rule`, :class:`GateConfig` from flags or a ``[gate]`` table): one
  parser per kind in :data:`RULE_KINDS` (threshold, latency, regression); see
  :mod:`harness.gate._rules` for the syntax.
* :func:`evaluate_gate` -> :class:`GateReport` (``exit_code``: 0 every rule holds, 1 one
  fails, 2 one cannot be evaluated).
* Outputs: :func:`gate_table` (the terminal), :func:`junit_xml`, :func:`markdown_summary`.
* :func:`latency_figure`: the one place latency is read (load-phase figures, when runs
  have them, are to be preferred there).
"""

from harness.gate._context import GateOptions
from harness.gate._errors import CannotEvaluate, GateError
from harness.gate._evaluate import evaluate_gate
from harness.gate._latency import LatencyFigure, LatencyRule, latency_figure
from harness.gate._model import GateReport, Outcome, Rule, Status, Target
from harness.gate._outputs import gate_table, junit_error, junit_xml, markdown_error, markdown_summary
from harness.gate._regression import RegressionRule
from harness.gate._rules import RULE_KINDS, GateConfig, parse_rule
from harness.gate._threshold import ThresholdRule

__all__ = [
    "RULE_KINDS",
    "CannotEvaluate",
    "GateConfig",
    "GateError",
    "GateOptions",
    "GateReport",
    "LatencyFigure",
    "LatencyRule",
    "Outcome",
    "RegressionRule",
    "Rule",
    "Status",
    "Target",
    "ThresholdRule",
    "evaluate_gate",
    "gate_table",
    "junit_error",
    "junit_xml",
    "latency_figure",
    "markdown_error",
    "markdown_summary",
    "parse_rule",
]
