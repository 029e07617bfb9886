"""Planning: where the judgments come from is one table of the experiment, and each source has its judge."""

from __future__ import annotations


def test_every_judgments_source_the_experiment_takes_has_a_judge() -> None:
    from harness.experiment import JUDGMENT_SOURCES
    from harness.run._plan import JUDGMENTS

    assert set(JUDGMENTS) == set(JUDGMENT_SOURCES) == {"files"}
