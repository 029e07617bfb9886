"""harness: queries, runs, fusion, scores and reports over indices built by ``indexer``."""

from base import HarnessError
from harness._errors import RunError
from indexer import __version__

__all__ = ["HarnessError", "RunError", "__version__"]
