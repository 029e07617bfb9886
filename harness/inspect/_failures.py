"""Worst queries of a run, with their missed relevant documents (``harness failures``)."""

from __future__ import annotations

from collections.abc import Iterable

from harness._errors import RunError
from harness.results import EvalRecord


def _order(r: EvalRecord) -> tuple[float, float, int, str, str, str]:
    first = r.first_relevant_rank
    return (
        r.metrics.ndcg_at_10,
        -(float(first) if first is not None else float("inf")),
        -r.relevant.missed,
        r.dataset,
        r.arm,
        r.query.id,
    )


def worst_queries(
    records: Iterable[EvalRecord],
    *,
    arm: str | None = None,
    dataset: str | None = None,
    worst: int = 10,
) -> list[EvalRecord]:
    """The ``worst`` records by nDCG@10 (then the later first relevant rank, then more missed, then ids).

    ``arm`` and ``dataset`` filter; a filter that matches nothing raises :class:`RunError` naming what exists.
    """
    if worst < 1:
        raise RunError(f"expected --worst of at least 1, found {worst}")
    rows = list(records)
    for key, wanted in (("arm", arm), ("dataset", dataset)):
        if wanted is not None:
            present = sorted({str(getattr(r, key)) for r in rows})
            rows = [r for r in rows if getattr(r, key) == wanted]
            if not rows:
                raise RunError(
                    f"no records with {key} {wanted!r}: expected one of {', '.join(present) or 'none'}"
                )
    return sorted(rows, key=_order)[:worst]
