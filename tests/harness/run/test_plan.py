"""Planning: where the judgments come from is one table of the experiment, and every source is a module."""

from __future__ import annotations

from harness.experiment import JUDGMENT_SOURCES
from harness.judgments.sources import SOURCES


def test_every_judgments_source_the_experiment_takes_is_a_registered_source() -> None:
    assert set(JUDGMENT_SOURCES) == set(SOURCES) == {"files", "clicks", "judge"}
    assert all(kind.__module__ == f"harness.judgments.sources._{name}" for name, kind in SOURCES.items())
