"""How a key is declared: one line, a field of a table (a frozen dataclass) made with :func:`key`.

    depth: int = key(100, check=between(10, 1000), affects=RESULTS, doc="results per query")

A key says its default, how a value is checked (a range, a set of names, a check of its own), whether a
string lists values with commas, whether it is a secret, what it affects, and one line on what it is. Every
command reads its keys from these declarations (the value checked by :func:`harness.keys.coerce`, refusals
named as the user wrote them), and the run's config hash covers the keys that affect results.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

#: what a key affects: the figures (then the run's config hash covers it), only how fast or how a run goes
#: (how requests travel, where caches are), or only where results go and how they are shown
RESULTS, PERFORMANCE, OUTPUT = "results", "performance", "output"
AFFECTS = (RESULTS, PERFORMANCE, OUTPUT)

#: retries of one request (an msearch, a chat call, a bulk chunk): the same range for every key of them
MAX_RETRIES = 50
#: a check: the value -> what was expected and found, or None when it is fine
Check = Callable[[Any], str | None]


def key(
    default: Any = None,
    *,
    affects: str,
    check: Check | None = None,
    choices: Callable[[], Iterable[str]] | None = None,
    commas: bool = False,
    empty: bool = False,
    secret: bool = False,
    paths: Callable[[str], bool] | None = None,
    canonical: Callable[[Any], Any] | None = None,
    doc: str = "",
) -> Any:
    """A dotted key: its default, what it affects (:data:`AFFECTS`), its check, the names it takes, whether a
    string lists values with commas (``"jsonl,es"``), whether an empty string is a value, whether it is a
    secret (never shown or stored), which of its text values are file paths (``paths``: resolved from the
    folder of the file that wrote them, as a ``Path`` key's are), how its value reads in the run's config hash
    (``canonical``: the same value however it is spelled), and one line on what it is."""
    if affects not in AFFECTS:
        raise ValueError(f"key(affects=...): expected one of {', '.join(AFFECTS)}, found {affects!r}")
    meta = {
        "check": check,
        "choices": choices,
        "commas": commas,
        "empty": empty,
        "doc": doc,
        "affects": affects,
        "secret": secret,
        "paths": paths,
        "canonical": canonical,
    }
    return field(default=default, repr=not secret, metadata=meta)


def declared(table: type) -> dict[str, dataclasses.Field[Any]]:
    """The keys a table declares (its fields made with :func:`key`), by name, in order: its own first, then
    those it inherits from a shared table (the chat endpoint's :class:`~harness.llm.EndpointKeys`)."""
    own = inspect.get_annotations(table)
    keys = [f for f in dataclasses.fields(table) if "affects" in f.metadata]
    return {f.name: f for f in sorted(keys, key=lambda f: f.name not in own)}


def default_of(f: dataclasses.Field[Any]) -> Any:
    """A key's default (None where it has none)."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None if f.default is dataclasses.MISSING else f.default


@dataclass(frozen=True, slots=True)
class Between:
    """A range check: ``low <= value <= high`` (``above``: ``low < value``), of a number or of each in a list.
    Its text (``str``) is the range as the key reference shows it."""

    low: float
    high: float
    above: bool = False

    def __call__(self, value: Any) -> str | None:
        items = value if isinstance(value, tuple) else (value,)
        ok = all((v > self.low if self.above else v >= self.low) and v <= self.high for v in items)
        if ok:
            return None
        low, high = _number(self.low), _number(self.high)
        if self.above:
            return f"expected more than {low} and at most {high}, found {value!r}"
        return f"expected {low}..{high}, found {value!r}"

    def __str__(self) -> str:
        low, high = _number(self.low), _number(self.high)
        return f"above {low}, up to {high}" if self.above else f"{low} to {high}"


def _number(value: float) -> str:
    """A bound as people write it: ``1000000``, ``0.5`` (never ``1e+06``)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def between(low: float, high: float, *, above: bool = False) -> Check:
    """``low <= value <= high`` (``above``: ``low < value``)."""
    return Between(low, high, above)


def nonempty(value: Any) -> str | None:
    """at least one"""
    return None if value else "expected at least one, found none"
