"""What click judgments and their agreement say, as lines to print and as JSON to keep beside the file."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ._agreement import ClickAgreement
from ._models import ClickJudgments
from ._observe import REFINED_RULE
from ._querysets import QuerySet


def judgment_lines(j: ClickJudgments) -> list[str]:
    spec = j.spec
    grades = [sum(x.grade == g for x in j.items) for g in range(spec.top_grade + 1)]
    window = f"{spec.start or '…'}..{spec.end or '…'}" if spec.start or spec.end else "all dates"
    lines = [
        f"{j.source}: {j.searches} searches, {len(j.queries)} queries, {len(j.items)} (query, document) pairs "
        f"judged by {spec.model} (max rank {spec.max_rank}, {window}, at least {spec.min_impressions} "
        f"impressions; cuts {', '.join(f'{c:g}' for c in spec.cuts)})",
        "  grades: " + ", ".join(f"{g}: {n}" for g, n in enumerate(grades)),
        "  click-through rate by rank: " + " ".join(f"{p:.3f}" for p in j.prior[:10]),
    ]
    left = {
        "pairs shown fewer times than the minimum": j.too_few_impressions,
        "events without a query_id": j.no_query_id,
        "searches without a query text": j.no_text,
    }
    lines += [f"  left out: {n} {what}" for what, n in left.items() if n]
    if j.refined:
        lines.append(
            f"  refined queries: {j.refined} search id{'s' if j.refined > 1 else ''} carried several query "
            f"texts ({j.later_texts} after the first): each is {REFINED_RULE}"
        )
    return lines


def agreement_lines(a: ClickAgreement, against: str) -> list[str]:
    k, (row0, row1) = a.kappa, a.confusion.counts
    lines = [
        f"{a.model} vs {against}: {a.pairs} pairs ({a.unjudged} not in the reference, counted as grade 0)"
        if a.unjudged
        else f"{a.model} vs {against}: {a.pairs} pairs",
        f"  Cohen's kappa (relevant or not) {k.value:.3f}  95% CI [{k.low:.3f}, {k.high:.3f}]; "
        f"confusion (rows clicks 0/1, columns reference 0/1): {list(row0)} {list(row1)}",
        f"  Kendall's tau-b, click score vs reference grade, over pairs: {a.pair_tau:.3f}",
    ]
    if a.weighted is not None:
        lines.append(f"  linearly weighted kappa on the grades: {a.weighted.value:.3f}")
    if a.systems is not None:
        s = a.systems
        lines.append(
            f"  {len(s.reference)} systems ordered by {s.measure} on {s.queries} queries: "
            f"Kendall's tau {s.tau:.3f}, Spearman's rho {s.rho:.3f} (reference vs clicks)"
        )
    return lines


def summary(j: ClickJudgments, agreement: ClickAgreement | None, against: str | None) -> dict[str, Any]:
    """The provenance and figures of one click-judgments file (what ``--output`` writes beside it)."""
    spec = {k: (str(v) if v is not None and k in ("start", "end") else v) for k, v in asdict(j.spec).items()}
    return {
        "source": j.source,
        "spec": spec,
        "searches": j.searches,
        "pairs": len(j.items),
        "queries": len(j.queries),
        "prior": list(j.prior),
        "left_out": {
            "too_few_impressions": j.too_few_impressions,
            "no_query_id": j.no_query_id,
            "no_text": j.no_text,
        },
        "refined_queries": {"search_ids": j.refined, "later_texts": j.later_texts, "rule": REFINED_RULE},
        "against": against,
        "agreement": agreement.to_dict() if agreement else None,
    }


def query_set_lines(qs: QuerySet) -> list[str]:
    head = (
        f"{len(qs.queries)} of {qs.distinct} queries ({qs.searches} searches) by {qs.spec.method} "
        f"(seed {qs.spec.seed})"
    )
    return [head] + [f"  {q.qid or '-':>6}  {q.frequency:>6}  {q.text[:80]}" for q in qs.queries[:10]]
