"""harness: queries, runs, fusion, scores and reports over indices built by ``indexer``."""

from indexer import HarnessError, RunError, __version__

__all__ = ["HarnessError", "RunError", "__version__"]
