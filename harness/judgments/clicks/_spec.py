"""What a click model is asked, as keys: where the UBI log is (:class:`UbiSource`) and how to judge from it
(:class:`ClickModelSpec`).

Both are tables of keys (:func:`harness.keys.key`), read under ``judgments.`` by the experiment's clicks
source and by ``harness clicks judgments`` / ``harness clicks queries`` alike (``--max-rank 5`` is
``--set judgments.max_rank=5``): each value is checked by its declaration, the keys together by the table's
``check()``, and every refusal names the value as its user wrote it. The defaults live here, once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from harness._errors import SettingError
from harness.keys import RESULTS, between, key
from indexer import CLICK, EVENTS_INDEX, IMPRESSION, QUERIES_INDEX, EventFilter

#: the click models (harness.judgments.clicks._models registers one function per name)
MODEL_NAMES = ("coec", "ctr")
DEFAULT_MAX_RANK = 20  # the Search Relevance Workbench's example
DEFAULT_MIN_IMPRESSIONS = 5
#: score cut points: a pair scoring at least cuts[g - 1] (and below cuts[g]) gets grade g
#: binary: at least twice the clicks expected at the ranks shown is relevant (1 would be "as clicked as the
#: average result shown", which most shown results, not relevant, are near)
DEFAULT_CUTS = (2.0,)


def _cuts(value: Any) -> str | None:
    """increasing, above 0"""
    if any(b <= a for a, b in itertools.pairwise(value)) or not value:
        return f"expected increasing score cut points, found {list(value)}"
    if any(c <= 0 for c in value):
        return f"expected positive cut points (a score 0 is grade 0), found {list(value)}"
    return None


@dataclass(frozen=True, slots=True)
class ClickModelSpec:
    """How judgments are computed from clicks (see :mod:`harness.judgments.clicks._models`)."""

    model: str = key("coec", affects=RESULTS, choices=lambda: MODEL_NAMES, doc="click model: coec | ctr")
    max_rank: int = key(DEFAULT_MAX_RANK, affects=RESULTS, check=between(1, 1000), doc="deepest rank read")
    start: date | None = key(affects=RESULTS, doc="first day of events read (YYYY-MM-DD)")
    end: date | None = key(affects=RESULTS, doc="last day of events read (YYYY-MM-DD)")
    min_impressions: int = key(
        DEFAULT_MIN_IMPRESSIONS,
        affects=RESULTS,
        check=between(1, 1_000_000),
        doc="pairs shown fewer times are left out",
    )
    cuts: tuple[float, ...] = key(
        DEFAULT_CUTS, affects=RESULTS, commas=True, check=_cuts, doc="score cut points for grades 1, 2, ..."
    )
    impression_action: str = key(IMPRESSION, affects=RESULTS, doc="the action_name of an impression")
    click_action: str = key(CLICK, affects=RESULTS, doc="the action_name of a click")

    def check(self) -> None:
        if self.start and self.end and self.start > self.end:
            raise SettingError(
                "start", f"expected {{judgments.start}} <= {{judgments.end}}, found {self.start} > {self.end}"
            )

    @property
    def top_grade(self) -> int:
        return len(self.cuts)

    def event_filter(self) -> EventFilter:
        """The events this model reads: impressions and clicks up to ``max_rank`` in the date window."""
        return EventFilter((self.impression_action, self.click_action), self.max_rank, self.start, self.end)


@dataclass(frozen=True, slots=True)
class UbiSource:
    """Where a UBI log is: JSON-lines exports (``events``, and ``queries``), else a cluster's indices."""

    events: Path | None = key(
        affects=RESULTS, doc="JSON-lines export of ubi_events (default: the cluster's index)"
    )
    queries: Path | None = key(
        affects=RESULTS, doc="JSON-lines export of ubi_queries (the searches and their hits)"
    )
    events_index: str | None = key(
        affects=RESULTS, doc=f"the cluster's events index (default {EVENTS_INDEX})"
    )
    queries_index: str | None = key(
        affects=RESULTS, doc=f"the cluster's queries index (default {QUERIES_INDEX})"
    )

    def check(self) -> None:
        files = self.events is not None
        if files and (self.events_index or self.queries_index):
            raise SettingError(
                "events",
                "expected the UBI log from one place: a JSON-lines export ({judgments.events}) or the cluster's "
                "indices ({judgments.events_index}), found both",
            )
        if not files and self.queries is not None:
            raise SettingError(
                "queries",
                "is an export of the searches: expected the events' export too ({judgments.events})",
            )

    @property
    def in_index(self) -> bool:
        return self.events is None

    @property
    def events_in(self) -> str:
        """The cluster's events index the log is read from (the default one when none was named)."""
        return self.events_index or EVENTS_INDEX

    @property
    def queries_in(self) -> str:
        return self.queries_index or QUERIES_INDEX
