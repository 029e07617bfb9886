"""What a click model is asked, typed and validated once: where the UBI log is, and how to judge from it.

Both build from keyword arguments or from a table (an experiment's ``[judgments]``, ``from_table``).
A value refused raises :class:`SpecError`, which knows its key, so each edge names it as its user
wrote it: the key path of a table (``judgments.max_rank: ...``), the flag on the command line
(``--max-rank: ...``, :func:`as_flag`). The defaults live here, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import date
from pathlib import Path
from typing import Any

from base import ConfigError
from harness._errors import SettingError
from indexer import CLICK, EVENTS_INDEX, IMPRESSION, QUERIES_INDEX, EventFilter

#: the click models (harness.judgments.clicks._models registers one function per name)
MODEL_NAMES = ("coec", "ctr")
DEFAULT_MAX_RANK = 20  # the Search Relevance Workbench's example
DEFAULT_MIN_IMPRESSIONS = 5
#: score cut points: a pair scoring at least cuts[g - 1] (and below cuts[g]) gets grade g
#: binary: at least twice the clicks expected at the ranks shown is relevant (1 would be "as clicked as the
#: average result shown", which most shown results, not relevant, are near)
DEFAULT_CUTS = (2.0,)


class SpecError(SettingError):
    """A value of a spec refused: the key it was given under, and what was expected."""


def as_flag(key: str) -> str:
    """The command-line flag of a spec key: ``max_rank`` -> ``--max-rank``."""
    return "--" + key.replace("_", "-")


def _fail(where: str, key: str, message: str) -> SpecError:
    return SpecError(f"{where}.{key}" if where else key, message)


def _date(value: Any, where: str, key: str) -> date | None:
    if value is None or isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise _fail(where, key, f"expected a date YYYY-MM-DD, found {value!r}")


def _check_keys(table: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise _fail(where, unknown[0], f"unknown key: expected some of {', '.join(known)}")


@dataclass(frozen=True, slots=True)
class ClickModelSpec:
    """How judgments are computed from clicks (see :mod:`harness.judgments.clicks._models`)."""

    model: str = "coec"
    max_rank: int = DEFAULT_MAX_RANK
    start: date | None = None
    end: date | None = None
    min_impressions: int = DEFAULT_MIN_IMPRESSIONS
    cuts: tuple[float, ...] = DEFAULT_CUTS
    impression_action: str = IMPRESSION
    click_action: str = CLICK

    def __post_init__(self) -> None:
        self._validate("")

    def _validate(self, where: str) -> None:
        if self.model not in MODEL_NAMES:
            raise _fail(
                where, "model", f"expected a click model among {', '.join(MODEL_NAMES)}, found {self.model!r}"
            )
        for key in ("max_rank", "min_impressions"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise _fail(where, key, f"expected an integer of 1 or more, found {value!r}")
        if not self.cuts or any(b <= a for a, b in zip(self.cuts, self.cuts[1:], strict=False)):
            raise _fail(where, "cuts", f"expected increasing score cut points, found {list(self.cuts)}")
        if any(c <= 0 for c in self.cuts):
            raise _fail(
                where, "cuts", f"expected positive cut points (a score 0 is grade 0), found {list(self.cuts)}"
            )
        for key in ("impression_action", "click_action"):
            if not isinstance(getattr(self, key), str) or not getattr(self, key).strip():
                raise _fail(where, key, f"expected an action name, found {getattr(self, key)!r}")
        if self.start and self.end and self.start > self.end:
            raise _fail(where, "start", f"expected start <= end, found {self.start} > {self.end}")

    @property
    def top_grade(self) -> int:
        return len(self.cuts)

    def event_filter(self) -> EventFilter:
        """The events this model reads: impressions and clicks up to ``max_rank`` in the date window."""
        return EventFilter((self.impression_action, self.click_action), self.max_rank, self.start, self.end)

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str = "judgments") -> ClickModelSpec:
        """The spec of a TOML table (unknown keys refused); errors name ``where.key``."""
        known = tuple(f.name for f in fields(cls))
        _check_keys(table, known, where)
        values = dict(table)
        for key in ("start", "end"):
            values[key] = _date(values.get(key), where, key)
        if "cuts" in values:
            cuts = values["cuts"]
            if not isinstance(cuts, list | tuple) or not all(isinstance(c, int | float) for c in cuts):
                raise _fail(where, "cuts", f"expected a list of numbers, found {cuts!r}")
            values["cuts"] = tuple(float(c) for c in cuts)
        try:
            return cls(**values)
        except SpecError as exc:
            raise SpecError(f"{where}.{exc.key}" if where else exc.key, exc.message) from None


@dataclass(frozen=True, slots=True)
class UbiSource:
    """Where a UBI log is: JSON-lines exports (``events``, and ``queries``), or a cluster's indices."""

    events: Path | None = None
    queries: Path | None = None
    events_index: str | None = None
    queries_index: str | None = None

    def __post_init__(self) -> None:
        files, index = self.events is not None, self.events_index is not None
        if files == index:
            raise ConfigError(
                "expected the UBI events from one place: a JSON-lines export (events) or an index "
                f"(events_index, e.g. {EVENTS_INDEX}), found " + ("both" if files else "neither")
            )
        if (files and self.queries_index) or (index and self.queries):
            raise ConfigError(
                "expected the UBI queries from where the events come from (a file, or an index)"
            )

    @property
    def in_index(self) -> bool:
        return self.events_index is not None

    @classmethod
    def cluster(
        cls, events_index: str = EVENTS_INDEX, queries_index: str | None = QUERIES_INDEX
    ) -> UbiSource:
        return cls(events_index=events_index, queries_index=queries_index)

    @classmethod
    def from_table(
        cls, table: Mapping[str, Any], where: str = "judgments.ubi", base: Path = Path()
    ) -> UbiSource:
        _check_keys(table, tuple(f.name for f in fields(cls)), where)
        values: dict[str, Any] = {}
        for key, value in table.items():
            if not isinstance(value, str) or not value.strip():
                raise _fail(where, key, f"expected a non-empty string, found {value!r}")
            values[key] = (base / value).expanduser() if key in ("events", "queries") else value
        try:
            return cls(**values)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}" if where else str(exc)) from None
