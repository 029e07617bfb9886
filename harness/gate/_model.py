"""The gate's value objects: where a rule applies, what it found, and its verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import ClassVar, Protocol

from harness.gate._context import GateContext
from harness.results import JudgeProvenance


class Status(StrEnum):
    PASS = "pass"
    FLAGGED = "flagged"
    """Passes, but worth a look (a drop beyond its margin that is not significant)."""
    FAIL = "fail"
    ERROR = "error"
    """Could not be evaluated."""

    @property
    def label(self) -> str:
        return {"pass": "pass", "flagged": "pass (flagged)", "fail": "FAIL", "error": "ERROR"}[self.value]


@dataclass(frozen=True, slots=True)
class Target:
    """Which datasets (a name or a glob; ``*`` = every one) and which arm a rule is about."""

    datasets: str
    arm: str

    def matches(self, dataset: str) -> bool:
        return fnmatchcase(dataset, self.datasets)

    def __str__(self) -> str:
        return self.arm if self.datasets == "*" else f"{self.datasets}/{self.arm}"


#: a finding's verdict once its p-value is corrected: (status, message), from the Holm-adjusted p (or None)
Decide = Callable[[float | None], tuple[Status, str]]


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule measured on one dataset, before its verdict (which may wait for Holm's correction)."""

    observed: str
    limit: str
    decide: Decide
    p_value: float | None = None


class Rule(Protocol):
    """A parsed rule: its text, its target, and how to check it on one dataset."""

    kind: ClassVar[str]
    needs_baseline: ClassVar[bool]
    uses_judgments: ClassVar[bool]
    """Whether the rule reads figures scored with judgments (a relevance measure), not timings."""

    @property
    def text(self) -> str: ...

    @property
    def target(self) -> Target: ...

    def check(self, dataset: str, ctx: GateContext) -> Finding:
        """Measure the rule on ``dataset`` (:class:`CannotEvaluate` if it cannot)."""
        ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """One rule on one dataset: a test case of the JUnit file, a row of the table."""

    rule: Rule
    dataset: str
    status: Status
    message: str
    observed: str = ""
    limit: str = ""
    p_value: float | None = None
    p_holm: float | None = None
    judge: JudgeProvenance | None = None
    """Set when the rule reads figures scored with an LLM judge's labels: its id and measured agreement."""

    @property
    def judge_note(self) -> str:
        """``labels of judge ID: kappa ...`` (empty for a rule over people's judgments or timings)."""
        return f"labels of judge {self.judge.id}: {self.judge.agreement_text()}" if self.judge else ""


@dataclass(frozen=True, slots=True)
class GateReport:
    """Every outcome of one gate, and which runs it compared."""

    run_id: str
    run_dir: str
    baseline_id: str | None
    baseline_dir: str | None
    outcomes: tuple[Outcome, ...]
    alpha: float
    test: str

    def count(self, status: Status) -> int:
        return sum(o.status is status for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """2 when a rule could not be evaluated, 1 when one failed, else 0."""
        if self.count(Status.ERROR):
            return 2
        return 1 if self.count(Status.FAIL) else 0

    @property
    def verdict(self) -> str:
        return {0: "passed", 1: "FAILED", 2: "could not evaluate"}[self.exit_code]

    def summary(self) -> str:
        """``gate FAILED: 5 checks: 3 passed (1 flagged), 1 failed, 1 could not be evaluated; exit 2``."""
        passed, flagged = self.count(Status.PASS) + self.count(Status.FLAGGED), self.count(Status.FLAGGED)
        parts = [f"{passed} passed" + (f" ({flagged} flagged)" if flagged else "")]
        if self.count(Status.FAIL):
            parts.append(f"{self.count(Status.FAIL)} failed")
        if self.count(Status.ERROR):
            parts.append(f"{self.count(Status.ERROR)} could not be evaluated")
        n = len(self.outcomes)
        return f"gate {self.verdict}: {n} check{'s' if n != 1 else ''}: {', '.join(parts)}; exit {self.exit_code}"
