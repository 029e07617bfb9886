"""The harness's branch of the exception tree (rooted at :class:`indexer.HarnessError`)."""

from __future__ import annotations

from indexer import EndpointError, HarnessError


class RunError(HarnessError):
    """Querying, fusing, evaluating or reporting failed."""


class GenerationError(EndpointError):
    """Some queries got no generation (``harness expand``); ``failures`` maps each query id to why."""

    def __init__(self, message: str, failures: dict[str, str]) -> None:
        super().__init__(message)
        self.failures = dict(failures)
