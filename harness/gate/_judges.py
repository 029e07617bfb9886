"""Rules over an LLM judge's labels say so: which judge, how far it agrees with people, and a refusal
when its agreement was never measured (unless the user allows it, ``--allow-unmeasured-judge``).

A dataset's figures were scored with a judge's labels when its ``judgments`` carry the judge's
provenance (``harness judge`` -> ``harness rescore``). Every rule that reads those figures (thresholds
and regressions on relevance measures; not latency) carries the judge's id and measured agreement into
the gate's table, JUnit file and Markdown summary.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.gate._context import GateContext
from harness.gate._errors import GateError
from harness.gate._model import Rule
from harness.results import JudgeProvenance

ALLOW_FLAG = "--allow-unmeasured-judge"


def judge_of(ctx: GateContext, dataset: str) -> JudgeProvenance | None:
    """The judge whose labels scored ``dataset`` of the run (None: people's judgments)."""
    ds = ctx.run.results.datasets.get(dataset)
    used = ds.judgments if ds is not None else None
    return used.judge if used is not None else None


def refuse_unmeasured(rules: Sequence[Rule], ctx: GateContext, allow: bool) -> None:
    """A :class:`GateError` when a rule reads labels of a judge whose agreement nobody measured."""
    if allow:
        return
    for rule in rules:
        if not rule.uses_judgments:
            continue
        for dataset in (d for d in ctx.run.results.datasets if rule.target.matches(d)):
            judge = judge_of(ctx, dataset)
            if judge is not None and judge.agreement is None:
                raise GateError(
                    f"rule {rule.text!r} on {dataset} reads figures scored with labels of judge {judge.id}, whose "
                    "agreement with human judgments was never measured: expected a judge measured against people "
                    f"(harness judge on pairs people judged), or {ALLOW_FLAG} to gate on it anyway"
                )
