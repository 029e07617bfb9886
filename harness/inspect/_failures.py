"""Worst queries of a run, with their missed relevant documents (``harness failures``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from indexer import RunError


def worst_queries(
    records: Iterable[Mapping[str, Any]],
    *,
    arm: str | None = None,
    dataset: str | None = None,
    worst: int = 10,
) -> list[Mapping[str, Any]]:
    """The ``worst`` records by nDCG@10 (then the later first relevant rank, then more missed, then query id).

    ``arm`` and ``dataset`` filter; a filter that matches nothing raises :class:`RunError`
    naming what exists.
    """
    if worst < 1:
        raise RunError(f"--worst must be at least 1, found {worst}")
    rows = list(records)
    for key, wanted in (("arm", arm), ("dataset", dataset)):
        if wanted is not None:
            present = sorted({str(r.get(key)) for r in rows})
            rows = [r for r in rows if r.get(key) == wanted]
            if not rows:
                raise RunError(
                    f"no records with {key} {wanted!r}: expected one of {', '.join(present) or 'none'}"
                )

    def order(r: Mapping[str, Any]) -> tuple[float, float, int, str, str, str]:
        first = r.get("first_relevant_rank")
        return (
            float((r.get("metrics") or {}).get("ndcg_at_10") or 0.0),
            -(float(first) if first is not None else float("inf")),
            -int((r.get("relevant") or {}).get("missed") or 0),
            str(r.get("dataset")),
            str(r.get("arm")),
            str((r.get("query") or {}).get("id")),
        )

    return sorted(rows, key=order)[:worst]
