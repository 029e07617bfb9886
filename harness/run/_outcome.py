"""What executing one dataset produced (:class:`DatasetOutcome`), and what its performance phases
measured (:class:`DatasetPerformance`): the records the assemble and publish steps read."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness._search import ArmRun
from harness.eval import Evaluation, FusionSpec
from harness.judgments.sources import Judged
from harness.load import LoadRun
from harness.results import AnnRecall, AnnSweep, ArmTarget, LoadResult
from harness.run._plan import DatasetPlan
from harness.run._sites import Sites
from harness.sweep import SweepOutcome
from indexer import Dataset, IndexSummary

Weights = tuple[float, float]


@dataclass(slots=True)
class DatasetPerformance:
    """What the performance phases measured on one dataset."""

    load: dict[str, LoadResult] = field(default_factory=dict)
    ann: dict[str, AnnRecall] = field(default_factory=dict)
    sweep: AnnSweep | None = None
    samples: dict[str, LoadRun] = field(default_factory=dict)  # arm -> every request (metrics records)


@dataclass(slots=True)
class DatasetOutcome:
    """What executing one dataset produced: every arm's run and scores, where they searched, and timings."""

    plan: DatasetPlan
    index: str
    runs: dict[str, ArmRun]
    evaluations: dict[str, Evaluation]
    fusion: FusionSpec | None
    timings: dict[str, float]
    index_summary: IndexSummary | None
    sites: Sites | None = None
    performance: DatasetPerformance | None = None  # the load phase, ANN recall and sweep (harness.run._perf)
    sum_weights: Weights | None = None  # of the in-engine weighted sum, when it ran
    sweep: SweepOutcome | None = None  # what held-out tuning chose for the fused arms
    sum_fold_weights: tuple[Weights, ...] = ()  # kfold: the in-engine sum's weights per fold
    targets: dict[str, ArmTarget] = field(default_factory=dict)  # the experiment file's own arms
    #: the judgments every arm was scored with, when a source made them (before the search, or after: a judge)
    judged: Judged | None = None

    @property
    def dataset(self) -> Dataset:
        return self.plan.dataset

    @property
    def scored(self) -> Dataset:
        """The dataset every arm was scored with (its judgments: the source's, else its own)."""
        return self.judged.dataset if self.judged is not None else self.plan.dataset
