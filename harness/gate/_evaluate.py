"""Checking every rule on every dataset it applies to, with one Holm correction over the regressions."""

from __future__ import annotations

from pathlib import Path

from harness.eval import holm
from harness.gate._context import GateContext, LoadedRun
from harness.gate._errors import CannotEvaluate, GateError
from harness.gate._judges import judge_of, refuse_unmeasured
from harness.gate._model import Finding, GateReport, Outcome, Rule, Status
from harness.gate._rules import GateConfig


def _expand(rule: Rule, ctx: GateContext) -> list[str]:
    names = [d for d in ctx.run.results.datasets if rule.target.matches(d)]
    if not names:
        raise CannotEvaluate(
            f"no dataset of the run matches {rule.target.datasets!r} (datasets: {', '.join(ctx.run.results.datasets)})"
        )
    return names


def _findings(rules: tuple[Rule, ...], ctx: GateContext) -> list[tuple[Rule, str, Finding | CannotEvaluate]]:
    found: list[tuple[Rule, str, Finding | CannotEvaluate]] = []
    for rule in rules:
        try:
            datasets = _expand(rule, ctx)
        except CannotEvaluate as exc:
            found.append((rule, rule.target.datasets, exc))
            continue
        for dataset in datasets:
            try:
                found.append((rule, dataset, rule.check(dataset, ctx)))
            except CannotEvaluate as exc:
                found.append((rule, dataset, exc))
    return found


def evaluate_gate(config: GateConfig, run_dir: Path) -> GateReport:
    """Every rule of ``config`` on ``run_dir`` (and its baseline): one outcome per rule and dataset."""
    if not config.rules:
        raise GateError(
            "no rules to check: expected --require RULE or --rules FILE with a [gate] require list"
        )
    needs = [r.text for r in config.rules if r.needs_baseline]
    if needs and config.baseline is None:
        raise GateError(
            f"rule {needs[0]!r} compares against a baseline: expected --baseline RUN_DIR, found none"
        )
    baseline = LoadedRun.load(config.baseline, "baseline") if config.baseline is not None else None
    ctx = GateContext(LoadedRun.load(run_dir, "run"), baseline, config.options)
    refuse_unmeasured(config.rules, ctx, config.allow_unmeasured_judge)
    found = _findings(config.rules, ctx)
    tested = [f for _, _, f in found if isinstance(f, Finding) and f.p_value is not None]
    adjusted = dict(
        zip(map(id, tested), holm([f.p_value for f in tested if f.p_value is not None]), strict=True)
    )
    outcomes = []
    for rule, dataset, f in found:
        judge = judge_of(ctx, dataset) if rule.uses_judgments else None
        if isinstance(f, CannotEvaluate):
            outcomes.append(Outcome(rule, dataset, Status.ERROR, f"cannot evaluate: {f}", judge=judge))
            continue
        p_holm = adjusted.get(id(f))
        status, message = f.decide(p_holm)
        outcomes.append(
            Outcome(rule, dataset, status, message, f.observed, f.limit, f.p_value, p_holm, judge)
        )
    return GateReport(
        run_id=ctx.run.run_id,
        run_dir=str(run_dir),
        baseline_id=baseline.run_id if baseline else None,
        baseline_dir=str(config.baseline) if baseline else None,
        outcomes=tuple(outcomes),
        alpha=config.options.alpha,
        test=config.options.test,
    )
