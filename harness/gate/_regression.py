"""Regressions against a baseline run: ``hybrid:ndcg@10 drop<=0.02``, ``hybrid:ndcg@10 drop<=3%``.

``drop`` (or ``regress``) is how much worse the run is than the baseline on the measure:
baseline mean minus run mean (the other way round for a measure where lower is better,
such as unjudged@10), over the queries both scored. A margin with ``%`` is relative to the
baseline's mean. ``vs baseline`` may follow for readability, and ``vs baseline:ARM`` compares
with another arm of the baseline (e.g. a new hybrid against production's lexical).

Each regression rule gets a paired test on the per-query scores of both runs
(``per_query.jsonl``; randomization by default), and the p-values of all regression rules
of one gate are Holm-corrected together. A rule fails only when the drop is larger than its
margin *and* significant after correction; a drop beyond the margin that is not significant
passes and is flagged, so that noise on a few dozen queries does not fail a build.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar

from harness.eval import STAT_TESTS, Measure
from harness.gate._context import GateContext, LoadedRun
from harness.gate._errors import CannotEvaluate
from harness.gate._model import Decide, Finding, Status, Target
from harness.gate._syntax import NUMBER, fmt, measure

_BODY = re.compile(
    rf"^(?P<measure>[A-Za-z_]+\s*@\s*\d+)\s+(?:drop|regress)\s*<=\s*(?P<margin>{NUMBER})\s*(?P<pct>%)?"
    r"(?:\s+vs\s+baseline(?::(?P<arm>[A-Za-z0-9_.+\->]+))?)?$"
)
_TOLERANCE = 1e-12


def _fingerprints(name: str, run: LoadedRun, base: LoadedRun) -> None:
    ours, theirs = run.dataset(name, "run"), base.dataset(name, "baseline")
    if ours.fingerprint == theirs.fingerprint:
        return
    raise CannotEvaluate(
        f"dataset {name}: the run's fingerprint {ours.fingerprint[:12]} differs from the baseline's "
        f"{theirs.fingerprint[:12]} ({_what_differs(name, run, base)}): runs over different data or judgments "
        "cannot be compared; re-run the baseline on the same data (or re-score both with the same judgments)"
    )


def _what_differs(name: str, run: LoadedRun, base: LoadedRun) -> str:
    a = run.results.manifest.datasets.get(name)
    b = base.results.manifest.datasets.get(name)
    if a is None or b is None:
        return "the manifests do not say which part"
    parts = [p for p in ("corpus", "queries", "qrels") if a.fingerprint.get(p) != b.fingerprint.get(p)]
    return f"different {', '.join(parts)}" if parts else "the manifests do not say which part"


def _paired(name: str, run: dict[str, float], base: dict[str, float]) -> list[str]:
    if set(run) != set(base):
        only_run, only_base = sorted(set(run) - set(base)), sorted(set(base) - set(run))
        raise CannotEvaluate(
            f"dataset {name}: the run and the baseline scored different queries ({len(only_run)} only in the run, "
            f"e.g. {only_run[:3]}; {len(only_base)} only in the baseline, e.g. {only_base[:3]}); a paired test needs the same"
        )
    return sorted(run)


@dataclass(frozen=True, slots=True)
class RegressionRule:
    kind: ClassVar[str] = "regression"
    needs_baseline: ClassVar[bool] = True
    uses_judgments: ClassVar[bool] = True

    text: str
    target: Target
    measure: Measure
    margin: float
    relative: bool = False
    baseline_arm: str | None = None

    @property
    def base_arm(self) -> str:
        return self.baseline_arm or self.target.arm

    def check(self, dataset: str, ctx: GateContext) -> Finding:
        base = ctx.need_baseline(self.text)
        _fingerprints(dataset, ctx.run, base)
        key = self.measure.key
        ctx.run.arm(dataset, self.target.arm, "run")
        base.arm(dataset, self.base_arm, "baseline")
        ours = ctx.run.scores(dataset, self.target.arm, key, "run")
        theirs = base.scores(dataset, self.base_arm, key, "baseline")
        qids = _paired(dataset, ours, theirs)
        a, b = [ours[q] for q in qids], [theirs[q] for q in qids]
        mean_run, mean_base = math.fsum(a) / len(a), math.fsum(b) / len(b)
        drop = mean_base - mean_run if self.measure.family.higher_is_better else mean_run - mean_base
        margin = self.margin * abs(mean_base) if self.relative else self.margin
        opts = ctx.options
        p = STAT_TESTS[opts.test](a, b, n_trials=opts.trials, seed=opts.seed)
        observed = f"{key} {fmt(mean_run)} vs {fmt(mean_base)}"
        return Finding(
            observed,
            f"drop <= {self._margin_text(margin)}",
            self._decider(drop, margin, opts.alpha, len(qids)),
            p,
        )

    def _margin_text(self, margin: float) -> str:
        return f"{self.margin * 100:g}% = {fmt(margin)}" if self.relative else fmt(margin)

    def _decider(self, drop: float, margin: float, alpha: float, n: int) -> Decide:
        def decide(p_holm: float | None) -> tuple[Status, str]:
            assert p_holm is not None
            significant = p_holm < alpha
            holm = f"Holm p={p_holm:.3g}, {n} queries"
            if drop < -_TOLERANCE:
                word = "significant gain" if significant else "gain"
                return Status.PASS, f"{word} {fmt(-drop)} ({holm}): passes"
            if drop <= _TOLERANCE:
                return Status.PASS, f"no change ({holm}): passes"
            if drop > margin + _TOLERANCE:
                if significant:
                    return (
                        Status.FAIL,
                        f"drop {fmt(drop)} > margin {fmt(margin)} and significant ({holm}): fails",
                    )
                return (
                    Status.FLAGGED,
                    f"drop {fmt(drop)} > margin {fmt(margin)} but not significant ({holm}): passes, flagged",
                )
            sig = "significant" if significant else "not significant"
            return Status.PASS, f"drop {fmt(drop)} <= margin {fmt(margin)} ({sig}, {holm}): passes"

        return decide


def parse(target: Target, body: str, text: str) -> RegressionRule | None:
    found = _BODY.match(body)
    if found is None:
        return None
    return RegressionRule(
        text,
        target,
        measure(found["measure"], text),
        float(found["margin"]) / (100 if found["pct"] else 1),
        relative=bool(found["pct"]),
        baseline_arm=found["arm"],
    )
