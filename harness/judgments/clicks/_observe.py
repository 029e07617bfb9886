"""From a UBI log to what click models count: per search, the results shown (at which rank) and clicked.

Rules:

* A search is a ``query_id``; its text is the ``user_query`` its events carry, else the one of its
  ``ubi_queries`` row (runs of whitespace collapsed: texts that differ only there are one query). Events without a ``query_id``, or whose search has no text, are counted and
  left out.
* A search showed a result where an ``impression`` event says so. A search without impression
  events showed its ``ubi_queries`` row's ``query_response_hit_ids`` (rank = position in the list,
  up to the max rank; the row's timestamp inside the date window). A clicked result counts as
  shown at its click's rank if nothing else says it was shown.
* A search whose events (or ``ubi_queries`` row) carry several texts (a user refining the query) is
  judged under the first text its events carry, in the log's order (its row's text where no event has
  one): the impressions and clicks of its later texts are merged into that text's pairs, and those
  searches and texts are counted (:data:`REFINED_RULE` says so in the output).
* Within one search a result counts once: shown at its best rank, clicked or not (repeated
  impression or click events of one result, as emitters re-fire them, do not add up).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from indexer import EventFilter, UbiEvent, UbiLog, UbiQuery, normalise_text

from ._spec import ClickModelSpec

#: how the pairs of a search id with several query texts are kept: printed and kept in ``.clicks.json``
REFINED_RULE = (
    "judged under the first text its events carry (log order), the impressions and clicks of its later "
    "texts merged into that text's pairs"
)


@dataclass(slots=True)
class Search:
    """One search as the log shows it: its text (and every text it carried, whitespace collapsed), the best
    rank of each result shown, the results clicked."""

    text: str = ""
    texts: set[str] = field(default_factory=set)
    shown: dict[str, int] = field(default_factory=dict)
    clicked: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PairCounts:
    """One (query text, document) pair over the log: impressions by rank, and the searches that clicked it."""

    query: str
    doc_id: str
    impressions_at: dict[int, int]
    clicks: int

    @property
    def impressions(self) -> int:
        return sum(self.impressions_at.values())


@dataclass(frozen=True, slots=True)
class Observations:
    """The counts every click model starts from; ``rank_*[r - 1]`` are the whole log's counts at rank r."""

    pairs: tuple[PairCounts, ...]
    rank_impressions: tuple[int, ...]
    rank_clicks: tuple[int, ...]
    searches: int
    no_query_id: int = 0
    no_text: int = 0
    refined: int = 0
    """Searches whose events carried several texts: judged under the first (:data:`REFINED_RULE`)."""
    later_texts: int = 0
    """The texts of those searches after their first, merged into it (one per search and text)."""

    @property
    def prior(self) -> tuple[float, ...]:
        """The click-through rate at each rank (clicks / impressions there), from the whole log."""
        return tuple(
            c / i if i else 0.0 for c, i in zip(self.rank_clicks, self.rank_impressions, strict=True)
        )

    @property
    def overall_ctr(self) -> float:
        shown = sum(self.rank_impressions)
        return sum(self.rank_clicks) / shown if shown else 0.0


def _searches(events: tuple[UbiEvent, ...], spec: ClickModelSpec) -> tuple[dict[str, Search], int]:
    searches: dict[str, Search] = {}
    unattributed = 0
    for e in events:
        if not e.query_id:
            unattributed += 1
            continue
        search = searches.setdefault(e.query_id, Search())
        search.text = search.text or e.user_query
        if e.user_query:
            search.texts.add(normalise_text(e.user_query))
        target = search.shown if e.action == spec.impression_action else search.clicked
        if e.position is not None and e.action in (spec.impression_action, spec.click_action):
            target[e.object_id] = min(e.position, target.get(e.object_id, e.position))
    return searches, unattributed


def _from_rows(searches: dict[str, Search], rows: dict[str, UbiQuery], keep: EventFilter) -> None:
    """Texts from the ``ubi_queries`` rows, and the hits shown by searches without impression events."""
    for qid, row in rows.items():
        search = searches.get(qid)
        if search is None and not (row.hit_ids and keep.in_window(row.timestamp)):
            continue
        search = searches.setdefault(qid, Search())
        search.text = search.text or row.user_query
        if row.user_query:
            search.texts.add(normalise_text(row.user_query))
        if not search.shown:
            limit = keep.max_rank or len(row.hit_ids)
            search.shown = {d: r for r, d in enumerate(row.hit_ids[:limit], 1) if d}
    for search in searches.values():
        for doc_id, rank in search.clicked.items():
            search.shown.setdefault(doc_id, rank)


def observe(log: UbiLog, spec: ClickModelSpec) -> Observations:
    """Count impressions and clicks per rank and per (query text, document) over the events ``spec`` keeps."""
    keep = spec.event_filter()
    searches, no_query_id = _searches(tuple(e for e in log.events if keep.keep(e)), spec)
    _from_rows(searches, log.query_rows(), keep)
    impressions: Counter[int] = Counter()
    clicks: Counter[int] = Counter()
    by_pair: dict[tuple[str, str], tuple[Counter[int], list[int]]] = {}
    texted = [s for s in searches.values() if s.text]
    for search in texted:
        for doc_id, rank in search.shown.items():
            clicked = doc_id in search.clicked
            impressions[rank] += 1
            clicks[rank] += clicked
            at, hits = by_pair.setdefault((normalise_text(search.text), doc_id), (Counter(), [0]))
            at[rank] += 1
            hits[0] += clicked
    depth = max(impressions, default=0)
    refined = [len(s.texts) - 1 for s in texted if len(s.texts) > 1]
    pairs = tuple(PairCounts(q, d, dict(at), hits[0]) for (q, d), (at, hits) in by_pair.items())
    return Observations(
        pairs,
        tuple(impressions[r] for r in range(1, depth + 1)),
        tuple(clicks[r] for r in range(1, depth + 1)),
        searches=len(texted),
        no_query_id=no_query_id,
        no_text=len(searches) - len(texted),
        refined=len(refined),
        later_texts=sum(refined),
    )
