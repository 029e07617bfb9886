"""The rule syntax shared by every kind: ``[DATASETS/]ARM:BODY``, comparison operators, numbers."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

from base import HarnessError
from harness.eval import Measure
from harness.gate._errors import GateError
from harness.gate._model import Target

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_ARM = re.compile(r"^[A-Za-z0-9_.+\->]+$")


def split_target(text: str) -> tuple[Target, str]:
    """``sample/hybrid:ndcg@10>=0.6`` -> (Target("sample", "hybrid"), "ndcg@10>=0.6")."""
    head, sep, body = text.partition(":")
    if not sep or not body.strip():
        raise GateError(
            f"rule {text!r}: expected [DATASET/]ARM:BODY such as 'hybrid:ndcg@10>=0.65', found no ':'"
        )
    scope, slash, arm = head.strip().rpartition("/")
    arm = arm.strip()
    if not _ARM.match(arm):
        raise GateError(f"rule {text!r}: expected an arm name before ':', found {arm!r}")
    return Target(scope.strip() if slash else "*", arm), body.strip()


def measure(name: str, rule: str) -> Measure:
    try:
        return Measure.parse(name)
    except HarnessError as exc:
        raise GateError(f"rule {rule!r}: {exc}") from None


def fmt(value: float) -> str:
    return f"{value:.4f}"
