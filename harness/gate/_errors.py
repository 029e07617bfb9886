"""The gate's errors: it cannot evaluate at all, or one rule on one dataset cannot be evaluated."""

from __future__ import annotations

from harness._errors import RunError


class GateError(RunError):
    """The gate cannot evaluate (a rule that does not parse, a file it cannot read, runs it cannot compare)."""

    exit_code = 2


class CannotEvaluate(GateError):
    """One rule on one dataset cannot be evaluated; the others still are."""
