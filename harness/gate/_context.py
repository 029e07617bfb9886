"""What rules are checked against: the run, the baseline, their per-query scores, the test settings."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from base import ConfigError, HarnessError
from harness.eval import STAT_TESTS
from harness.gate._errors import CannotEvaluate, GateError
from harness.results import ArmResult, DatasetResult, RunResults, load_per_query

DEFAULT_ALPHA = 0.05
DEFAULT_TRIALS = 10_000
DEFAULT_SEED = 42


@dataclass(frozen=True, slots=True)
class GateOptions:
    """How regressions are judged: the paired test, its significance level, trials and seed."""

    alpha: float = DEFAULT_ALPHA
    test: str = "randomization"
    trials: int = DEFAULT_TRIALS
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ConfigError(f"expected a significance level alpha between 0 and 1, found {self.alpha}")
        if self.test not in STAT_TESTS:
            raise ConfigError(f"expected a paired test among {', '.join(STAT_TESTS)}, found {self.test!r}")
        if self.trials < 1:
            raise ConfigError(f"expected at least 1 randomization trial, found {self.trials}")


@dataclass(slots=True)
class LoadedRun:
    """A run directory read once: results now, per-query scores when a rule first needs them."""

    run_dir: Path
    results: RunResults
    _scores: dict[tuple[str, str, str], dict[str, float]] | None = field(default=None)

    @classmethod
    def load(cls, run_dir: Path, role: str) -> LoadedRun:
        try:
            return cls(Path(run_dir), RunResults.load(run_dir))
        except HarnessError as exc:
            raise GateError(f"cannot read the {role} {run_dir}") from exc

    @property
    def run_id(self) -> str:
        return self.results.manifest.run_id

    def dataset(self, name: str, role: str) -> DatasetResult:
        found = self.results.datasets.get(name)
        if found is None:
            raise CannotEvaluate(
                f"the {role} has no dataset {name} (it has {', '.join(self.results.datasets)})"
            )
        return found

    def arm(self, dataset: str, arm: str, role: str) -> ArmResult:
        found = self.dataset(dataset, role).arms.get(arm)
        if found is None:
            arms = ", ".join(self.dataset(dataset, role).arms)
            raise CannotEvaluate(f"the {role} has no arm {arm} on {dataset} (arms: {arms})")
        return found

    def scores(self, dataset: str, arm: str, measure: str, role: str) -> dict[str, float]:
        """Per-query scores of one arm and measure, from ``per_query.jsonl``."""
        if self._scores is None:
            try:
                rows = load_per_query(self.run_dir)
            except HarnessError as exc:
                raise CannotEvaluate(f"cannot read the per-query scores of the {role}") from exc
            table: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
            for row in rows:
                for key, value in row.metrics.items():
                    table[(row.dataset, row.arm, key)][row.qid] = value
            self._scores = dict(table)
        found = self._scores.get((dataset, arm, measure))
        if not found:
            raise CannotEvaluate(
                f"the {role} ({self.run_dir}) has no per-query {measure} for {arm} on {dataset} in per_query.jsonl"
            )
        return found


@dataclass(slots=True)
class GateContext:
    run: LoadedRun
    baseline: LoadedRun | None
    options: GateOptions = field(default_factory=GateOptions)

    def need_baseline(self, rule_text: str) -> LoadedRun:
        if self.baseline is None:
            raise GateError(
                f"rule {rule_text!r} compares against a baseline: expected --baseline RUN_DIR, found none"
            )
        return self.baseline
