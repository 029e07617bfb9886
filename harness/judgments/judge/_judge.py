"""Judging a set of pairs: prompts built, costs said before any call, answers read strictly, labels combined.

    spec = JudgeOptions(llm=("gpt-4o-mini",), llm_url="http://127.0.0.1:8000/v1").build()
    run = judge_pairs(spec, pairs_from_run(run_dir, arms=["lexical", "vector", "hybrid"]))
    run.labels        # {qid: {doc: combined label}}: only pairs some judge labelled on the scale

Each judge (a model and a template) answers every pair once (cached). Before any call, every
judge's plan is printed: pairs, answers already cached, calls to make, and an estimate of the
prompt tokens those calls send. An answer that is not a label on the scale is kept with its reason
(:class:`Verdict`), counted, and gives no grade; labels combine over the judges that gave one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from rich.console import Console

from base import ConfigError, progress
from harness.expand import GenerationStats, Task
from harness.judgments.judge._client import JudgeCalls, Plan
from harness.judgments.judge._combine import combine, combiner
from harness.judgments.judge._context import Context, read_context
from harness.judgments.judge._pairs import Pair, PairSet
from harness.judgments.judge._scale import parse_answer
from harness.judgments.judge._spec import Judge, JudgeSpec
from harness.judgments.judge._text import document_block, query_block
from indexer import Backend

Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One judge's answer on one pair: the label it gives on the scale, or why it gives none."""

    judge: str
    label: int | None
    problem: str
    answer: str


@dataclass(frozen=True, slots=True)
class JudgedPair:
    pair: Pair
    verdicts: tuple[Verdict, ...]
    label: int | None
    truncated: bool


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """The outcome of judging one pair set with one spec."""

    spec: JudgeSpec
    pairs: PairSet
    judged: tuple[JudgedPair, ...]
    skipped: tuple[Pair, ...]
    """Pairs whose document has no text to judge on (not judged, not graded)."""
    created: str
    plans: dict[str, Plan]
    stats: dict[str, GenerationStats]

    @property
    def labels(self) -> Qrels:
        """The combined labels, for the pairs that have one."""
        return _qrels((j.pair, j.label) for j in self.judged)

    def judge_labels(self, index: int) -> Qrels:
        """The labels of the ``index``-th judge alone."""
        return _qrels((j.pair, j.verdicts[index].label) for j in self.judged)

    def parse_failures(self, index: int | None = None) -> int:
        """Answers that were not a label on the scale (of one judge, or of all)."""
        rows = [j.verdicts if index is None else (j.verdicts[index],) for j in self.judged]
        return sum(1 for verdicts in rows for v in verdicts if v.label is None)

    @property
    def unlabelled(self) -> int:
        return sum(1 for j in self.judged if j.label is None)


def _qrels(items: Iterable[tuple[Pair, int | None]]) -> Qrels:
    out: Qrels = {}
    for pair, label in items:
        if label is not None:
            out.setdefault(pair.qid, {})[pair.doc_id] = label
    return out


def _tasks(judge: Judge, blocks: dict[Pair, tuple[str, str]]) -> list[Task]:
    return [
        Task(pair.key, tuple((m["role"], m["content"]) for m in judge.prompt.render(q, d)))
        for pair, (q, d) in blocks.items()
    ]


def _blocks(pairs: PairSet, context: Context, limit: int) -> tuple[dict[Pair, tuple[str, str]], set[Pair]]:
    """Each pair's query and document blocks, and the pairs whose document was truncated."""
    blocks, truncated = {}, set()
    queries = pairs.dataset.queries
    for pair in pairs.pairs:
        if pair.doc_id not in context:
            continue
        document, cut = document_block(pair.doc_id, context[pair.doc_id], limit)
        blocks[pair] = (query_block(pair.qid, queries[pair.qid]), document)
        if cut:
            truncated.add(pair)
    return blocks, truncated


def print_plans(console: Console, spec: JudgeSpec, plans: dict[str, Plan]) -> None:
    """The cost of the run, before any call: per judge, pairs, cached answers, calls and prompt tokens."""
    for judge_id, plan in plans.items():
        console.print(
            f"judge {judge_id}: {plan.pairs:,} pairs, {plan.cached:,} answers cached, {plan.calls:,} calls to make "
            f"(~{plan.prompt_tokens:,} prompt tokens, counted as words and punctuation) at {spec.endpoint.url()}",
            highlight=False,
            soft_wrap=True,
        )


def judge_pairs(
    spec: JudgeSpec,
    pairs: PairSet,
    *,
    backend: Backend | None = None,
    console: Console | None = None,
    show_progress: bool = True,
) -> JudgeRun:
    """Judge every pair of ``pairs`` with every judge of ``spec`` (see the module docstring)."""
    console = console or Console(stderr=True)
    if not pairs.pairs:
        raise ConfigError(f"no pairs to judge ({pairs.source})")
    context, empty = read_context(pairs, spec.context, backend)
    usable = {doc: fields for doc, fields in context.items() if doc not in set(empty)}
    blocks, truncated = _blocks(pairs, usable, spec.context.max_doc_tokens)
    calls = {
        j.id: JudgeCalls(spec.endpoint, j.model, j.prompt.sha256, spec.settings, spec.cache_dir)
        for j in spec.judges
    }
    tasks = {j.id: _tasks(j, blocks) for j in spec.judges}
    plans = {jid: calls[jid].plan(tasks[jid]) for jid in calls}
    print_plans(console, spec, plans)  # before any call
    verdicts = {j.id: _verdicts(j, calls[j.id], tasks[j.id], console, show_progress) for j in spec.judges}
    how = combiner(spec.combine)
    judged = []
    for pair in blocks:
        row = tuple(verdicts[j.id][pair.key] for j in spec.judges)
        judged.append(JudgedPair(pair, row, combine([v.label for v in row], how), pair in truncated))
    skipped = tuple(p for p in pairs.pairs if p not in blocks)
    created = datetime.now(UTC).isoformat(timespec="seconds")
    stats = {jid: c.stats for jid, c in calls.items()}
    return JudgeRun(spec, pairs, tuple(judged), skipped, created, plans, stats)


def _verdicts(
    judge: Judge, calls: JudgeCalls, tasks: list[Task], console: Console, show_progress: bool
) -> dict[str, Verdict]:
    """One judge's answers to every task, read on its scale."""
    what = f"judging with {judge.model}"
    with progress(what, len(tasks), unit="pairs", console=console, enabled=show_progress) as bar:
        answers = calls.run(tasks, on_done=bar.advance, on_retry=lambda why: bar.set(retries=why))
    return {key: _verdict(judge, calls.final_text(answer)) for key, answer in answers.items()}


def _verdict(judge: Judge, text: str) -> Verdict:
    parsed = parse_answer(text, judge.prompt.scale)
    return Verdict(judge.id, parsed.label, parsed.problem, text)
