"""Absolute thresholds on a measure: ``hybrid:ndcg@10>=0.65`` (a floor), ``lexical:unjudged@10<=0.95``.

The run's mean of the measure (``results.json``) is compared with the value; ``>=`` and ``>``
are floors, ``<=`` and ``<`` ceilings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from harness.eval import Measure
from harness.gate._context import GateContext
from harness.gate._errors import CannotEvaluate
from harness.gate._model import Finding, Status, Target
from harness.gate._syntax import NUMBER, OPERATORS, fmt, measure

_BODY = re.compile(rf"^(?P<measure>[A-Za-z_]+\s*@\s*\d+)\s*(?P<op>>=|<=|>|<)\s*(?P<value>{NUMBER})$")


@dataclass(frozen=True, slots=True)
class ThresholdRule:
    kind: ClassVar[str] = "threshold"
    needs_baseline: ClassVar[bool] = False
    uses_judgments: ClassVar[bool] = True

    text: str
    target: Target
    measure: Measure
    op: str
    value: float

    def check(self, dataset: str, ctx: GateContext) -> Finding:
        arm = ctx.run.arm(dataset, self.target.arm, "run")
        observed = arm.metric(self.measure.key)
        if observed is None:
            raise CannotEvaluate(
                f"{self.target.arm} on {dataset} has no {self.measure.key} in results.json "
                f"(it has {', '.join(arm.metrics)}); re-run or re-score with it"
            )
        holds = OPERATORS[self.op](observed, self.value)
        word = "floor" if self.op in (">=", ">") else "ceiling"
        message = f"{self.measure.key} {fmt(observed)} {'meets' if holds else 'misses'} the {word} {self.op} {self.value:g}"

        def decide(_: float | None) -> tuple[Status, str]:
            return (Status.PASS if holds else Status.FAIL), message

        return Finding(fmt(observed), f"{self.op} {self.value:g}", decide)


def parse(target: Target, body: str, text: str) -> ThresholdRule | None:
    found = _BODY.match(body)
    if found is None:
        return None
    m = measure(found["measure"], text)
    return ThresholdRule(text, target, m, found["op"], float(found["value"]))
