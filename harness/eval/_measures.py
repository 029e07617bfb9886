"""Measures as parsed value objects, like ir_measures: ``Measure.parse("nDCG@10")``.

A measure is a family (nDCG, nDCG_judged, ERR, Recall, MAP, MRR, P, Unjudged) and a rank cutoff.
Families live in a registry; each one says how it is computed (by ranx, under
which name, or by this package) and how ir_measures spells it, so tests can
check us against an independent implementation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from base import ConfigError

MAX_CUTOFF = 1000


@dataclass(frozen=True)
class Family:
    """A kind of measure: its canonical spelling, ranx name and ir_measures name."""

    name: str
    ranx: str | None
    """ranx metric name, or ``None`` when this package computes it itself."""
    ir_measures: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    higher_is_better: bool = True
    """False for measures where a rise is bad news (Unjudged); a CI gate's regressions follow it."""


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("nDCG", "ndcg", "nDCG", ("ndcg",), "normalised DCG, linear gains (trec_eval ndcg_cut)"),
        Family(
            "nDCG_judged",
            None,
            "nDCG(judged_only=True)",
            ("ndcg_judged", "condensed_ndcg", "ndcg_condensed"),
            "judged-only (condensed) nDCG, Sakai 2007: unjudged documents are removed from the ranking, "
            "then nDCG as above",
        ),
        Family(
            "ERR",
            None,
            "ERR",
            ("err",),
            "expected reciprocal rank, Chapelle et al. 2009: a user stops at rank r with probability "
            "R = (2^grade - 1) / 2^max_grade; max_grade is the qrels' highest grade unless a scale is declared",
        ),
        Family("Recall", "recall", "R", ("recall", "r"), "relevant retrieved in the top k / all relevant"),
        Family("MAP", "map", "AP", ("map", "ap"), "average precision over the top k (trec_eval map_cut)"),
        Family("MRR", "mrr", "RR", ("mrr", "rr"), "reciprocal rank of the first relevant in the top k"),
        Family("P", "precision", "P", ("p", "precision"), "relevant in the top k / k"),
        Family(
            "Unjudged",
            None,
            "Judged",
            ("unjudged",),
            "share of the top k with no judgment at all (1 - ir_measures Judged@k); 0 for an empty result",
            higher_is_better=False,
        ),
    )
}
_BY_ALIAS: dict[str, Family] = {
    alias: family for family in FAMILIES.values() for alias in (family.name.lower(), *family.aliases)
}
_PATTERN = re.compile(r"^\s*([A-Za-z_]+)\s*@\s*(\d+)\s*$")


@dataclass(frozen=True, order=True)
class Measure:
    """One measure at one cutoff, e.g. ``nDCG@10``. ``str()`` is the canonical spelling."""

    name: str
    cutoff: int

    def __post_init__(self) -> None:
        if self.name not in FAMILIES:
            raise ConfigError(f"unknown measure {self.name!r}; known measures: {', '.join(FAMILIES)}")
        if not 1 <= self.cutoff <= MAX_CUTOFF:
            raise ConfigError(f"measure {self.name}: cutoff must be 1..{MAX_CUTOFF}, got {self.cutoff}")

    @classmethod
    def parse(cls, text: str | Measure) -> Measure:
        """Parse ``"nDCG@10"``, ``"ndcg@10"``, ``"P@10"``, ``"precision@10"``... (case-insensitive)."""
        if isinstance(text, Measure):
            return text
        match = _PATTERN.match(text)
        if match is None:
            raise ConfigError(
                f"cannot parse measure {text!r}: expected NAME@CUTOFF such as 'nDCG@10'; "
                f"known measures: {', '.join(FAMILIES)}"
            )
        family = _BY_ALIAS.get(match.group(1).lower())
        if family is None:
            raise ConfigError(
                f"unknown measure {match.group(1)!r} in {text!r}; known measures: {', '.join(FAMILIES)}"
            )
        return cls(family.name, int(match.group(2)))

    @property
    def family(self) -> Family:
        return FAMILIES[self.name]

    @property
    def key(self) -> str:
        """Lower-case key used in results.json and per-query files: ``ndcg@10``, ``p@10``."""
        return f"{self.name.lower()}@{self.cutoff}"

    @property
    def ranx_name(self) -> str | None:
        """The ranx metric name (``ndcg@10``, ``precision@10``), or ``None`` if we compute it."""
        base = self.family.ranx
        return None if base is None else f"{base}@{self.cutoff}"

    @property
    def ir_measures_name(self) -> str:
        """How ir_measures spells the measure (Unjudged maps to Judged, its complement)."""
        return f"{self.family.ir_measures}@{self.cutoff}"

    def __str__(self) -> str:
        return f"{self.name}@{self.cutoff}"


def parse_measures(
    texts: str | Measure | list[str | Measure] | tuple[str | Measure, ...],
) -> tuple[Measure, ...]:
    """Parse one measure, a comma-separated list, or a sequence; duplicates are dropped, order kept."""
    items: list[str | Measure]
    if isinstance(texts, Measure):
        items = [texts]
    elif isinstance(texts, str):
        items = [t for t in texts.split(",") if t.strip()]
    else:
        items = list(texts)
    if not items:
        raise ConfigError("no measures given; expected e.g. 'nDCG@10,Recall@100'")
    out: dict[Measure, None] = {}
    for item in items:
        out[Measure.parse(item)] = None
    return tuple(out)


PRIMARY_MEASURE = Measure("nDCG", 10)
DEFAULT_MEASURES: tuple[Measure, ...] = (
    PRIMARY_MEASURE,
    Measure("nDCG_judged", 10),
    Measure("nDCG", 100),
    Measure("Recall", 10),
    Measure("Recall", 100),
    Measure("MAP", 100),
    Measure("MRR", 100),
    Measure("P", 10),
    Measure("Unjudged", 10),
)
