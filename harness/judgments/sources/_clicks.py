"""``source = "clicks"``: judgments from a User Behavior Insights click log, made before any search.

The log (a JSON-lines export, ``events`` and ``queries``, or the cluster's ``events_index`` /
``queries_index``) and the click model (``model = "coec"`` or ``"ctr"``, ``max_rank``, ``start`` /
``end``, ``min_impressions``, ``cuts``) are :mod:`harness.judgments.clicks`' own specs, read from the table's keys
and validated there, with their defaults. The log's queries take the dataset's query ids by text; the
click grades meet the dataset's judgments as ``judgments.mode`` says, and where people judged some of
the same pairs the agreement (Cohen's kappa) is measured and said with every figure.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from base import ConfigError
from harness._errors import SettingError
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
from harness.judgments.sources._base import BeforeSearch, Judged, Key, Setting, Source
from indexer import Dataset

_LOG_DOCS = {
    "events": "JSON-lines export of ubi_events",
    "queries": "JSON-lines export of ubi_queries (the searches and their hits)",
    "events_index": "the cluster's events index (instead of a file)",
    "queries_index": "the cluster's queries index",
}
_MODEL_DOCS = {
    "model": "click model: coec | ctr",
    "max_rank": "deepest rank read",
    "start": "first day of events read (YYYY-MM-DD)",
    "end": "last day of events read",
    "min_impressions": "pairs shown fewer times are left out",
    "cuts": "score cut points for grades 1, 2, ...",
    "impression_action": "the action_name of an impression",
    "click_action": "the action_name of a click",
}
_PATHS = ("events", "queries")


def _keys() -> dict[str, Key]:
    """The log's keys and the click model's, with the defaults their specs define."""
    log = {f.name: Key(_LOG_DOCS[f.name], f.default) for f in dataclasses.fields(UbiSource)}
    model = {f.name: Key(_MODEL_DOCS[f.name], f.default) for f in dataclasses.fields(ClickModelSpec)}
    return log | model


def _log(values: Mapping[str, Setting]) -> UbiSource:
    table = {
        k: s.path(s.value) if k in _PATHS and isinstance(s.value, str) else s.value for k, s in values.items()
    }
    try:
        return UbiSource.from_table(table, where="")
    except SettingError:
        raise
    except ConfigError as exc:  # (where the events come from: a file or an index, not both nor neither)
        raise SettingError("events", str(exc)) from None


@dataclass(frozen=True, slots=True)
class Clicks(Source):
    """A UBI log and the click model that turns it into judgments."""

    log: UbiSource
    model: ClickModelSpec = dataclasses.field(default_factory=ClickModelSpec)

    name = "clicks"
    doc = "a UBI click log: COEC or CTR judgments, before any search"
    keys = _keys()

    @classmethod
    def from_settings(cls, values: Mapping[str, Setting]) -> Clicks:
        log_keys = {f.name for f in dataclasses.fields(UbiSource)}
        log = _log({k: s for k, s in values.items() if k in log_keys})
        model = {k: s.value for k, s in values.items() if k not in log_keys}
        return cls(log, ClickModelSpec.from_table(model, where=""))

    def identity(self) -> dict[str, Any]:
        where = str(self.log.events) if self.log.events is not None else self.log.events_index
        spec = {k: _plain(v) for k, v in dataclasses.asdict(self.model).items()}
        return {"log": where, "model": spec}

    def before_search(self, ds: Dataset, ctx: BeforeSearch) -> Judged:
        found, ids = from_log(read_log(self.log, self.model, ctx.connection()), self.model, ds.queries)
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


def _plain(value: Any) -> Any:
    """A spec's value as JSON holds it (dates as YYYY-MM-DD, tuples as lists)."""
    return (
        value.isoformat() if isinstance(value, date) else list(value) if isinstance(value, tuple) else value
    )


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
