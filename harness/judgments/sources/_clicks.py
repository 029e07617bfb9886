"""``source = "clicks"``: judgments from a User Behavior Insights click log, made before any search.

The log (a JSON-lines export, ``events`` and ``queries``, or the cluster's ``events_index`` /
``queries_index``) and the click model (``model = "coec"`` or ``"ctr"``, ``max_rank``, ``start`` /
``end``, ``min_impressions``, ``cuts``) are :mod:`harness.judgments.clicks`' own tables of keys, with their
defaults; ``harness clicks judgments`` reads the same keys and judges through :meth:`Clicks.read`. The log's queries take the dataset's query ids by text; the
click grades meet the dataset's judgments as ``judgments.mode`` says, and where people judged some of
the same pairs the agreement (Cohen's kappa) is measured and said with every figure.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from base import ConfigError
from harness.judgments._apply import judgments_used, merge_judgments
from harness.judgments._rundata import qrels_text
from harness.judgments.clicks import (
    ClickAgreement,
    ClickJudgments,
    ClickModelSpec,
    UbiSource,
    agreement,
    agreement_lines,
    click_qrels,
    from_log,
    judgment_lines,
    read_log,
    summary,
)
from harness.judgments.sources._base import BeforeSearch, Judged, Source
from indexer import ConnectionSettings, Dataset


@dataclass(frozen=True, slots=True)
class Clicks(Source):
    """A UBI log and the click model that turns it into judgments."""

    log: UbiSource = dataclasses.field(default_factory=UbiSource)
    model: ClickModelSpec = dataclasses.field(default_factory=ClickModelSpec)

    name = "clicks"
    doc = "a UBI click log: COEC or CTR judgments, before any search"
    tables = (UbiSource, ClickModelSpec)

    @classmethod
    def from_tables(cls, tables: Sequence[Any]) -> Clicks:
        log, model = tables
        return cls(log, model)

    def key_tables(self) -> tuple[Any, ...]:
        return (self.log, self.model)

    def read(
        self, conn: ConnectionSettings | None, queries: Mapping[str, str] | None = None
    ) -> tuple[ClickJudgments, dict[str, str]]:
        """The click model's judgments of the log, and their query ids (``queries``: a dataset's, matched by
        text); ``conn``: the cluster, for a log in its indices."""
        return from_log(read_log(self.log, self.model, conn), self.model, queries)

    def before_search(self, ds: Dataset, ctx: BeforeSearch) -> Judged:
        found, ids = self.read(ctx.connection(), ds.queries)
        graded = {q: docs for q, docs in click_qrels(found, ids).items() if q in ds.queries}
        if not graded:
            raise ConfigError(
                f"{found.source}: the click log judges none of the {len(ds.queries)} queries of {ds.name} "
                "(its queries take the dataset's ids by their text): nothing to score with"
            )
        measured = _agreement(found, ds, ids)
        merged = merge_judgments(ds.qrels, graded, ctx.mode)
        name = f"{self.model.model} click judgments of {found.source} ({_sha8(graded)})"
        used = judgments_used(None, name, ctx.mode)
        if measured is not None:
            used = dataclasses.replace(used, label=f"{used.label}; {_kappa(measured)}")
        notes = judgment_lines(found) + (
            agreement_lines(measured, f"{ds.name}'s judgments") if measured else []
        )
        against = f"{ds.name}'s judgments" if measured else None
        return Judged(ds.with_qrels(merged.qrels), used, tuple(notes), summary(found, measured, against))


def _agreement(found: ClickJudgments, ds: Dataset, ids: Mapping[str, str]) -> ClickAgreement | None:
    """The click grades against the dataset's judgments, where it has some on the same pairs."""
    if not ds.qrels:
        return None
    try:
        return agreement(found, ds.qrels, ids)
    except ConfigError:  # (fewer than two pairs shared with people's judgments)
        return None


def _kappa(a: ClickAgreement) -> str:
    k = a.kappa
    return f"kappa {k.value:.3f} [{k.low:.3f}, {k.high:.3f}] on {a.pairs:,} pairs vs the dataset's judgments"


def _sha8(qrels: dict[str, dict[str, int]]) -> str:
    return hashlib.sha256(qrels_text(qrels).encode("utf-8")).hexdigest()[:8]
