"""Latency ceilings: ``vector:p99<=50ms``, ``hybrid:took-p50<=5ms``, ``lexical:p95<0.2s``.

:func:`latency_figure` is the one place the gate reads an arm's latency. When the run had a load
phase (``harness run --load``), ``pNN`` is the arm's per-request latency from it (Rally's: from
the scheduled start under a target throughput; p50, p90, p99, p99.9, max) and ``took-pNN`` the
engine's ``took`` there. Without one it reads the relevance pass: ``pNN`` is ``batch_ms`` (the
client round trip of the msearch request that carried the query, queries travel in batches)
and ``took-pNN`` is ``engine_took_ms``, with p50, p95 and p99. The message names the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from harness.gate._context import GateContext
from harness.gate._errors import CannotEvaluate
from harness.gate._model import Finding, Status, Target
from harness.gate._syntax import NUMBER, OPERATORS
from harness.results import ArmResult, Distribution, Percentiles

_BODY = re.compile(
    rf"^(?P<stat>(?:took-)?p\d+(?:\.\d+)?|(?:took-)?max)\s*(?P<op><=|<)\s*(?P<value>{NUMBER})\s*(?P<unit>ms|s)$"
)
RELEVANCE_PASS = "relevance pass, msearch round trip"
ENGINE_TOOK = "relevance pass, engine took"
LOAD_LATENCY = "load phase, per-request latency"
LOAD_TOOK = "load phase, engine took"


@dataclass(frozen=True, slots=True)
class LatencyFigure:
    """A latency in milliseconds and where it was measured."""

    ms: float
    source: str


def _percentile(p: Percentiles, stat: str) -> float | None:
    return {"p50": p.p50, "p95": p.p95, "p99": p.p99}.get(stat)


def _load_percentile(d: Distribution, stat: str) -> float | None:
    return {"p50": d.p50, "p90": d.p90, "p99": d.p99, "p99.9": d.p99_9, "max": d.max}.get(stat)


def latency_figure(arm: ArmResult, stat: str) -> LatencyFigure | None:
    """The arm's ``stat`` (``p99``, ``took-p50``...) in ms, or ``None`` when the results lack it."""
    took = stat.startswith("took-")
    name = stat.removeprefix("took-")
    if arm.load is not None:
        value = _load_percentile(arm.load.took_ms if took else arm.load.latency_ms, name)
        return None if value is None else LatencyFigure(value, LOAD_TOOK if took else LOAD_LATENCY)
    value = _percentile(arm.engine_took_ms if took else arm.batch_ms, name)
    return None if value is None else LatencyFigure(value, ENGINE_TOOK if took else RELEVANCE_PASS)


@dataclass(frozen=True, slots=True)
class LatencyRule:
    kind: ClassVar[str] = "latency"
    needs_baseline: ClassVar[bool] = False
    uses_judgments: ClassVar[bool] = False

    text: str
    target: Target
    stat: str
    op: str
    limit_ms: float

    def check(self, dataset: str, ctx: GateContext) -> Finding:
        arm = ctx.run.arm(dataset, self.target.arm, "run")
        figure = latency_figure(arm, self.stat)
        if figure is None:
            raise CannotEvaluate(
                f"{self.target.arm} on {dataset} has no {self.stat} latency in results.json (with a load phase: "
                "p50, p90, p99, p99.9, max and their took-; without: p50, p95, p99 and took-p50, took-p95, "
                "took-p99 of the relevance pass)"
            )
        holds = OPERATORS[self.op](figure.ms, self.limit_ms)
        verb = "within" if holds else "over"
        message = f"{self.stat} {figure.ms:.1f} ms ({figure.source}) {verb} the ceiling {self.op} {self.limit_ms:g} ms"

        def decide(_: float | None) -> tuple[Status, str]:
            return (Status.PASS if holds else Status.FAIL), message

        return Finding(f"{figure.ms:.1f} ms", f"{self.op} {self.limit_ms:g} ms", decide)


def parse(target: Target, body: str, text: str) -> LatencyRule | None:
    found = _BODY.match(body.replace(" ", ""))
    if found is None:
        return None
    scale = 1000.0 if found["unit"] == "s" else 1.0
    return LatencyRule(text, target, found["stat"], found["op"], float(found["value"]) * scale)
