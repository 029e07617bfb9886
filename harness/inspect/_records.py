"""Building the evaluation records: one :class:`EvalRecord` per judged query × arm.

Built from runs, qrels and per-query scores; documents' titles and snippets come from
a lookup (the engine's ``mget`` in a run). See :mod:`harness.results` for the record.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from harness._errors import RunError
from harness.eval import rank
from harness.results import (
    ArmComparison,
    Attribution,
    Delta,
    EvalRecord,
    MissedDoc,
    QueryText,
    RecordMetrics,
    RelevantCounts,
    TopHit,
)

#: How many top hits a record keeps, and how long a snippet of a missed document is.
TOP_HITS = 10
SNIPPET_CHARS = 300
#: Per-query measures a record needs from the runner's scores.
NEEDED_MEASURES = ("ndcg@10", "recall@100")

DocLookup = Callable[[Sequence[str]], Mapping[str, tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class RecordContext:
    """What every record of one dataset shares."""

    run_id: str
    timestamp: str
    dataset: str
    queries: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int]]
    runs: Mapping[str, Mapping[str, Mapping[str, float]]]
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]]
    doc_lookup: DocLookup
    batch_ms: Mapping[str, Mapping[str, float]]
    expansions: Mapping[str, str] | None = None
    reasoning: Mapping[str, str] | None = None  # qid -> trace split off the expansion (never searched)
    baseline_arm: str = "lexical"
    compare_arm: str = "hybrid"
    fusion: str | None = None
    model: str | None = None
    expanded_arms: Collection[str] | None = None

    def is_expanded(self, arm: str) -> bool:
        return arm in self.expanded_arms if self.expanded_arms is not None else "+" in arm


@dataclass(frozen=True, slots=True)
class _Query:
    """One query seen across arms: rankings, ranks of every document, judged and relevant documents."""

    qid: str
    judged: Mapping[str, int]
    relevant: dict[str, int]
    relevant_order: list[str]
    ranked: dict[str, list[tuple[str, float]]]
    ranks: dict[str, dict[str, int]]
    ndcg: dict[str, float]
    docs: Mapping[str, tuple[str, str]]


def _check(ctx: RecordContext) -> None:
    if not ctx.runs:
        raise RunError(
            f"no arms to build records from for dataset {ctx.dataset!r}: expected at least one run"
        )
    for arm in ctx.runs:
        scores = ctx.per_query.get(arm)
        missing = [m for m in NEEDED_MEASURES if scores is None or m not in scores]
        if missing:
            raise RunError(
                f"per-query scores for arm {arm!r} of dataset {ctx.dataset!r} lack {', '.join(missing)}: "
                f"expected measures {list(NEEDED_MEASURES)}, found {sorted(scores) if scores else 'none'}"
            )


def _query(ctx: RecordContext, qid: str) -> _Query:
    if qid not in ctx.queries:
        raise RunError(f"qrels of dataset {ctx.dataset!r} judge query {qid!r}, which is not in its queries")
    judged = ctx.qrels[qid]
    relevant = {d: g for d, g in judged.items() if g > 0}
    ranked = {arm: rank(ctx.runs[arm].get(qid, {}), qid) for arm in ctx.runs}
    ranks = {arm: {doc: i + 1 for i, (doc, _) in enumerate(ranked[arm])} for arm in ctx.runs}
    wanted: set[str] = set()
    for arm in ctx.runs:
        wanted.update(doc for doc, _ in ranked[arm][:TOP_HITS])
        wanted.update(doc for doc in relevant if doc not in ranks[arm])
    return _Query(
        qid=qid,
        judged=judged,
        relevant=relevant,
        relevant_order=[d for d, _ in sorted(relevant.items(), key=lambda item: (-item[1], item[0]))],
        ranked=ranked,
        ranks=ranks,
        ndcg={arm: float(ctx.per_query[arm]["ndcg@10"].get(qid, 0.0)) for arm in ctx.runs},
        docs=ctx.doc_lookup(sorted(wanted)) if wanted else {},
    )


def _outcome(delta: float | None, eps: float = 1e-9) -> str | None:
    if delta is None:
        return None
    return "won" if delta > eps else "lost" if delta < -eps else "tied"


def _record(ctx: RecordContext, q: _Query, arm: str) -> EvalRecord:
    arm_ranks = q.ranks[arm]
    found = sorted(arm_ranks[d] for d in q.relevant if d in arm_ranks)
    first = found[0] if found else None
    missed = [d for d in q.relevant_order if d not in arm_ranks]
    title = {doc: q.docs.get(doc, ("", ""))[0] for doc in q.docs}
    compare = ctx.compare_arm in q.ndcg and ctx.baseline_arm in q.ndcg
    comparison_delta = q.ndcg[ctx.compare_arm] - q.ndcg[ctx.baseline_arm] if compare else None
    expanded = ctx.is_expanded(arm)
    expansion = ctx.expansions.get(q.qid) if ctx.expansions is not None and expanded else None
    trace = ctx.reasoning.get(q.qid) if ctx.reasoning is not None and expanded else None
    batch = ctx.batch_ms.get(arm, {}).get(q.qid)
    return EvalRecord(
        timestamp=ctx.timestamp,
        run_id=ctx.run_id,
        dataset=ctx.dataset,
        arm=arm,
        fusion=ctx.fusion,
        model=ctx.model,
        query=QueryText(q.qid, ctx.queries[q.qid], expansion, trace),
        metrics=RecordMetrics(
            ndcg_at_10=float(ctx.per_query[arm]["ndcg@10"].get(q.qid, 0.0)),
            recall_at_100=float(ctx.per_query[arm]["recall@100"].get(q.qid, 0.0)),
            reciprocal_rank=1.0 / first if first else 0.0,
        ),
        first_relevant_rank=first,
        relevant=RelevantCounts(
            len(q.relevant), len(found), len(missed), sum(1 for r in found if r <= TOP_HITS)
        ),
        retrieved_count=len(q.ranked[arm]),
        missed=tuple(
            MissedDoc(
                doc,
                q.relevant[doc],
                title.get(doc, ""),
                q.docs.get(doc, ("", ""))[1][:SNIPPET_CHARS],
                tuple(a for a in ctx.runs if doc in q.ranks[a]),
            )
            for doc in missed
        ),
        top_hits=tuple(
            TopHit(i + 1, doc, title.get(doc, ""), float(score), q.judged.get(doc), doc in q.judged)
            for i, (doc, score) in enumerate(q.ranked[arm][:TOP_HITS])
        ),
        attribution=tuple(
            Attribution(
                doc, q.relevant[doc], tuple(a for a in ctx.runs if doc in q.ranks[a]), arm_ranks.get(doc)
            )
            for doc in q.relevant_order
        ),
        arms_ndcg_at_10=dict(q.ndcg),
        delta=Delta(
            ctx.baseline_arm, q.ndcg[arm] - q.ndcg[ctx.baseline_arm] if ctx.baseline_arm in q.ndcg else None
        ),
        comparison=ArmComparison(
            ctx.compare_arm, ctx.baseline_arm, comparison_delta, _outcome(comparison_delta)
        ),
        batch_ms=float(batch) if batch is not None else None,
    )


def build_records(ctx: RecordContext) -> Iterator[EvalRecord]:
    """One record per judged query × arm (queries in qrels order, arms in ``runs`` order).

    ``runs`` maps arm -> ``{qid: {docid: score}}``; ``per_query`` maps arm -> measure
    (``ndcg@10``, ``recall@100``) -> qid -> value; ``batch_ms`` maps arm -> qid -> ms (the msearch round trip).
    ``doc_lookup`` returns ``{docid: (title, text)}`` (unknown ids get an empty title).
    ``expansions`` (qid -> text) go on the records of expanded arms (default: names with ``+``), and
    so does ``reasoning`` (qid -> a reasoning model's trace, split off and never searched with).
    """
    _check(ctx)
    for qid in ctx.qrels:
        q = _query(ctx, qid)
        for arm in ctx.runs:
            yield _record(ctx, q, arm)
