"""``source = "judge"``: an LLM judge over the pooled top-k of the run's own arms, after the search.

The judge is ``harness judge``'s own (:class:`~harness.judgments.judge.JudgeOptions` read from the table's keys,
built and checked once into a :class:`~harness.judgments.judge.JudgeSpec`, with its defaults); the pool is
``harness pool``'s (the top ``depth`` of each arm, default every arm, the pairs people judged kept in, so
that the judge's agreement with them is measured). Judging happens once per dataset, after every arm
was searched, fused and reranked and before any is scored; each answer is committed to the judge's
cache as it arrives, so a rerun (or a resumed run) makes only the calls not answered yet, none once
all are. The labels and their provenance go to ``RUN_DIR/judged/<judge>/<dataset>/``; they meet the
dataset's judgments as ``judgments.mode`` says, and every figure scored with them names the judge and
its measured agreement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from base import ConfigError
from harness.judgments._apply import judgments_used, merge_judgments
from harness.judgments.judge import (
    DEFAULT_DEPTH,
    JudgeOptions,
    JudgeSpec,
    PairSet,
    default_output,
    judge_and_write,
    pairs_from_rankings,
)
from harness.judgments.sources._base import AfterSearch, Judged, Source
from harness.keys import RESULTS, between, key
from harness.results import Ranking
from indexer import Dataset, read_judgments


@dataclass(frozen=True, slots=True)
class PoolKeys:
    """Which pairs are pooled: the top ``depth`` of the arms (``judgments.depth``, ``judgments.arms``), read by
    the judge source, ``harness judge`` and ``harness pool`` alike."""

    depth: int = key(
        DEFAULT_DEPTH, affects=RESULTS, check=between(1, 1000), doc="top documents of each arm pooled"
    )
    arms: tuple[str, ...] = key((), affects=RESULTS, commas=True, doc="arms pooled (default: every arm)")
    unjudged_only: bool = key(
        False, affects=RESULTS, doc="judge only pairs people did not judge (agreement then unmeasured)"
    )


@dataclass(frozen=True, slots=True)
class Judge(Source):
    """An LLM judge (one or several, combined) and the pool of the arms' results it judges."""

    pool: PoolKeys
    options: JudgeOptions
    spec: JudgeSpec  # (the options built: the templates read)

    name = "judge"
    doc = "an LLM judge over the pooled top-k of the run's own arms, after the search"
    tables = (PoolKeys, JudgeOptions)
    after_search = True

    @classmethod
    def from_tables(cls, tables: Sequence[Any]) -> Judge:
        pool, options = tables
        return cls(pool, options, options.build())

    def key_tables(self) -> tuple[Any, ...]:
        return (self.pool, self.options)

    @property
    def named_arms(self) -> tuple[str, ...]:
        return self.pool.arms

    def identity(self) -> dict[str, Any]:
        return {"judge": self.spec.id}  # (each template's hash: a file's text changes the judge)

    def judge(self, ds: Dataset, rankings: Mapping[str, Ranking], ctx: AfterSearch) -> Judged:
        pairs = self._pairs(ds, rankings, ctx)
        backend = ctx.backend if self.spec.context.source == "index" else None
        result = judge_and_write(
            self.spec,
            pairs,
            default_output(self.spec, pairs),
            backend=backend,
            console=ctx.console,
            show_progress=ctx.progress,
        )
        judgments = read_judgments(result.qrels, "trec")
        merged = merge_judgments(ds.qrels, judgments.qrels(ds.queries).qrels, ctx.mode)
        name = f"{result.qrels.relative_to(ctx.run_dir)} ({judgments.sha256[:8]})"
        used = judgments_used(None, name, ctx.mode, result.provenance)
        return Judged(ds.with_qrels(merged.qrels), used, tuple(result.lines()))

    def _pairs(self, ds: Dataset, rankings: Mapping[str, Ranking], ctx: AfterSearch) -> PairSet:
        arms = self.pool.arms
        unknown = [a for a in arms if a not in rankings]
        if unknown:
            raise ConfigError(
                f"judgments.arms: expected arms of this run ({', '.join(rankings)}), found {', '.join(unknown)}"
            )
        chosen = {a: r for a, r in rankings.items() if not arms or a in arms}
        pairs = pairs_from_rankings(
            ds,
            chosen,
            depth=self.pool.depth,
            unjudged_only=self.pool.unjudged_only,
            where=str(ctx.run_dir),
            index=ctx.index,
        )
        return dataclasses.replace(pairs, run_dir=ctx.run_dir)
