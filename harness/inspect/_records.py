"""Evaluation records: one document per query × arm, built from runs, qrels and per-query scores.

A record answers, for one query in one arm: how well did it do, where was the first
relevant document, which relevant documents were never retrieved (and by whom they
were), what the top of the ranking looked like, and how it compares with a baseline arm.
The same dicts go to every sink (Elasticsearch, JSONL) and back into the reports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from indexer import RunError

#: How many top hits a record keeps, and how long a snippet of a missed document is.
TOP_HITS = 10
SNIPPET_CHARS = 300

#: Per-query measures taken from the runner's per-query scores: record key -> ranx measure.
MEASURES_FROM_RUNNER: dict[str, str] = {"ndcg_at_10": "ndcg@10", "recall_at_100": "recall@100"}

DocLookup = Callable[[Sequence[str]], Mapping[str, tuple[str, str]]]


def record_id(run_id: str, dataset: str, arm: str, qid: str) -> str:
    """Deterministic document id for (run, dataset, arm, query): re-writing a run overwrites, never duplicates."""
    key = "\x1f".join((run_id, dataset, arm, qid))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]


def rank_run(run: Mapping[str, float]) -> list[tuple[str, float]]:
    """Order one query's ``{docid: score}`` by score descending, ties broken by doc id ascending."""
    return sorted(run.items(), key=lambda item: (-item[1], item[0]))


def _default_expanded(arm: str) -> bool:
    return "+" in arm  # e.g. "lexical+hyde": the arm searched with the expansion text


def build_records(
    *,
    run_id: str,
    timestamp: str,
    dataset: str,
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    per_query: Mapping[str, Mapping[str, Mapping[str, float]]],
    doc_lookup: DocLookup,
    latency_ms: Mapping[str, Mapping[str, float]],
    expansions: Mapping[str, str] | None = None,
    baseline_arm: str = "lexical",
    compare_arm: str = "hybrid",
    fusion: str | None = None,
    model: str | None = None,
    expanded_arms: Collection[str] | None = None,
) -> Iterator[dict[str, object]]:
    """Yield one evaluation record per judged query × arm (queries in ``qrels`` order, arms in ``runs`` order).

    ``runs`` maps arm -> ``{qid: {docid: score}}``; ``per_query`` maps arm -> ranx measure
    (``ndcg@10``, ``recall@100``) -> qid -> value; ``latency_ms`` maps arm -> qid -> ms.
    ``doc_lookup`` returns ``{docid: (title, text)}`` for the ids asked (ids it does not know
    are shown with an empty title). ``expansions`` (qid -> text) is attached to the records of
    ``expanded_arms`` (default: arms whose name carries a ``+`` suffix, such as ``lexical+hyde``).
    """
    arms = list(runs)
    if not arms:
        raise RunError(f"no arms to build records from for dataset {dataset!r}: expected at least one run")
    for arm in arms:
        scores = per_query.get(arm)
        missing = [m for m in MEASURES_FROM_RUNNER.values() if scores is None or m not in scores]
        if missing:
            raise RunError(
                f"per-query scores for arm {arm!r} of dataset {dataset!r} lack {', '.join(missing)}: "
                f"expected measures {sorted(MEASURES_FROM_RUNNER.values())}, "
                f"found {sorted(scores) if scores else 'none'}"
            )
    is_expanded = (lambda a: a in expanded_arms) if expanded_arms is not None else _default_expanded

    for qid in qrels:
        if qid not in queries:
            raise RunError(f"qrels of dataset {dataset!r} judge query {qid!r}, which is not in its queries")
        judged = qrels[qid]
        relevant = {d: g for d, g in judged.items() if g > 0}
        ranked = {arm: rank_run(runs[arm].get(qid, {})) for arm in arms}
        ranks = {arm: {doc: i + 1 for i, (doc, _) in enumerate(ranked[arm])} for arm in arms}
        ndcg = {arm: float(per_query[arm]["ndcg@10"].get(qid, 0.0)) for arm in arms}

        wanted: set[str] = set()
        for arm in arms:
            wanted.update(doc for doc, _ in ranked[arm][:TOP_HITS])
            wanted.update(doc for doc in relevant if doc not in ranks[arm])
        docs = doc_lookup(sorted(wanted)) if wanted else {}

        relevant_order = [d for d, _ in sorted(relevant.items(), key=lambda item: (-item[1], item[0]))]
        attribution_base = [
            {
                "id": doc,
                "grade": grade,
                "arms": [arm for arm in arms if doc in ranks[arm]],
            }
            for doc in relevant_order
            for grade in (relevant[doc],)
        ]
        comparison_delta = (
            ndcg[compare_arm] - ndcg[baseline_arm] if compare_arm in ndcg and baseline_arm in ndcg else None
        )

        for arm in arms:
            arm_ranks = ranks[arm]
            found = sorted(arm_ranks[d] for d in relevant if d in arm_ranks)
            first = found[0] if found else None
            missed = [d for d in relevant_order if d not in arm_ranks]
            expansion = expansions.get(qid) if expansions is not None and is_expanded(arm) else None
            latency = latency_ms.get(arm, {}).get(qid)
            yield {
                "@timestamp": timestamp,
                "run_id": run_id,
                "dataset": dataset,
                "arm": arm,
                "fusion": fusion,
                "model": model,
                "query": {"id": qid, "text": queries[qid], "expansion": expansion},
                "metrics": {
                    **{
                        key: float(per_query[arm][m].get(qid, 0.0)) for key, m in MEASURES_FROM_RUNNER.items()
                    },
                    "reciprocal_rank": 1.0 / first if first else 0.0,
                },
                "first_relevant_rank": first,
                "relevant": {
                    "total": len(relevant),
                    "retrieved": len(found),
                    "missed": len(missed),
                    "retrieved_in_top_10": sum(1 for r in found if r <= TOP_HITS),
                },
                "retrieved_count": len(ranked[arm]),
                "missed": [
                    {
                        "id": doc,
                        "grade": relevant[doc],
                        "title": docs.get(doc, ("", ""))[0],
                        "snippet": docs.get(doc, ("", ""))[1][:SNIPPET_CHARS],
                        "retrieved_by": [a for a in arms if doc in ranks[a]],
                    }
                    for doc in missed
                ],
                "top_hits": [
                    {
                        "rank": i + 1,
                        "id": doc,
                        "title": docs.get(doc, ("", ""))[0],
                        "score": float(score),
                        "grade": judged.get(doc),
                        "judged": doc in judged,
                    }
                    for i, (doc, score) in enumerate(ranked[arm][:TOP_HITS])
                ],
                "attribution": [
                    {**a, "rank": arm_ranks.get(doc)}
                    for doc, a in zip(relevant_order, attribution_base, strict=True)
                ],
                "arms_ndcg_at_10": dict(ndcg),
                "delta": {
                    "baseline_arm": baseline_arm,
                    "ndcg_at_10": ndcg[arm] - ndcg[baseline_arm] if baseline_arm in ndcg else None,
                },
                "comparison": {
                    "arm": compare_arm,
                    "baseline_arm": baseline_arm,
                    "ndcg_at_10_delta": comparison_delta,
                    "outcome": _outcome(comparison_delta),
                },
                "latency_ms": float(latency) if latency is not None else None,
            }


def _outcome(delta: float | None, eps: float = 1e-9) -> str | None:
    if delta is None:
        return None
    if delta > eps:
        return "won"
    if delta < -eps:
        return "lost"
    return "tied"
