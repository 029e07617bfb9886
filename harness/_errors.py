"""The harness's branch of the exception tree (rooted at :class:`indexer.HarnessError`)."""

from __future__ import annotations

from indexer import HarnessError


class RunError(HarnessError):
    """Querying, fusing, evaluating or reporting failed."""
