"""Measures as parsed value objects, like ir_measures: ``Measure.parse("nDCG@10")``.

A measure is a family (nDCG, nDCG_judged, ERR, Recall, MAP, MRR, P, Bpref, Success, Unjudged), a rank
cutoff (``None``: the whole ranking, as trec_eval's ``map``, ``recip_rank``, ``bpref`` and ``ndcg``) and,
for the binary families, an optional relevance level of its own (ir_measures' ``P(rel=2)@10``; without
one, the evaluation's level applies, trec_eval's ``-l``). Families live in a registry; each says how it is
computed (by ranx, under which name, or by this package) and how ir_measures and trec_eval spell it, so
that the three spellings parse to one measure and tests can check us against both tools.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from base import ConfigError

MAX_CUTOFF = 1000


@dataclass(frozen=True)
class Family:
    """A kind of measure: its canonical spelling, ranx name, ir_measures and trec_eval names."""

    name: str
    ranx: str | None
    """ranx metric name, or ``None`` when this package computes it itself."""
    ir_measures: str
    aliases: tuple[str, ...] = ()
    description: str = ""
    higher_is_better: bool = True
    """False for measures where a rise is bad news (Unjudged); a CI gate's regressions follow it."""
    trec: str | None = None
    """trec_eval's name: ``P`` for ``P_10``; the cut form (``ndcg_cut``) of a family with a full form."""
    trec_full: str | None = None
    """trec_eval's name of the measure over the whole ranking (``map``, ``recip_rank``), if it has one."""
    binary: bool = False
    """Whether a relevance level decides what counts as relevant (trec_eval's ``-l``)."""
    full: bool = False
    """Whether the family has a form over the whole ranking (no cutoff)."""


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "nDCG",
            "ndcg",
            "nDCG",
            ("ndcg",),
            "normalised DCG, linear gains (trec_eval ndcg_cut; without a cutoff, trec_eval ndcg)",
            trec="ndcg_cut",
            trec_full="ndcg",
            full=True,
        ),
        Family(
            "nDCG_judged",
            None,
            "nDCG(judged_only=True)",
            ("ndcg_judged", "condensed_ndcg", "ndcg_condensed"),
            "judged-only (condensed) nDCG, Sakai 2007 (trec_eval -J ndcg_cut): unjudged documents are removed "
            "from the ranking, then nDCG as above",
            full=True,
        ),
        Family(
            "ERR",
            None,
            "ERR",
            ("err",),
            "expected reciprocal rank, Chapelle et al. 2009: a user stops at rank r with probability "
            "R = (2^grade - 1) / 2^max_grade; max_grade is the qrels' highest grade unless a scale is declared",
        ),
        Family(
            "Recall",
            "recall",
            "R",
            ("recall", "r"),
            "relevant retrieved in the top k / all relevant (trec_eval recall)",
            trec="recall",
            binary=True,
        ),
        Family(
            "MAP",
            "map",
            "AP",
            ("map", "ap"),
            "average precision over the top k (trec_eval map_cut; without a cutoff, trec_eval map)",
            trec="map_cut",
            trec_full="map",
            binary=True,
            full=True,
        ),
        Family(
            "MRR",
            "mrr",
            "RR",
            ("mrr", "rr"),
            "reciprocal rank of the first relevant in the top k (without a cutoff, trec_eval recip_rank)",
            trec_full="recip_rank",
            binary=True,
            full=True,
        ),
        Family(
            "P",
            "precision",
            "P",
            ("p", "precision"),
            "relevant in the top k / k (trec_eval P)",
            trec="P",
            binary=True,
        ),
        Family(
            "Bpref",
            None,
            "Bpref",
            ("bpref",),
            "binary preference, Buckley and Voorhees 2004, as trec_eval computes it (ranx's bpref differs: "
            "it divides by zero where a query has no judged non-relevant document)",
            trec_full="bpref",
            binary=True,
            full=True,
        ),
        Family(
            "Success",
            "hit_rate",
            "Success",
            ("success", "hit_rate"),
            "1 if a relevant document is in the top k, else 0 (trec_eval success)",
            trec="success",
            binary=True,
        ),
        Family(
            "Unjudged",
            None,
            "Judged",
            ("unjudged",),
            "share of the top k with no judgment (or a negative one), divided by k as trec_eval's unj does "
            "(1 - ir_measures Judged@k); 0 for an empty result",
            higher_is_better=False,
            trec="unj",
        ),
    )
}
_BY_ALIAS: dict[str, Family] = {
    alias: family for family in FAMILIES.values() for alias in (family.name.lower(), *family.aliases)
}
_PATTERN = re.compile(
    r"^\s*([A-Za-z_]+)\s*(?:\(\s*([a-z_]+)\s*=\s*([A-Za-z0-9]+)\s*\))?\s*(?:@\s*(\d+))?\s*$"
)
_TREC_CUT = {f.trec: f for f in FAMILIES.values() if f.trec is not None}
_TREC_FULL = {f.trec_full: f for f in FAMILIES.values() if f.trec_full is not None}
_TREC_PATTERN = re.compile(r"^\s*([A-Za-z_]+?)(?:[._](\d+))?\s*$")


def _known() -> str:
    return ", ".join(FAMILIES)


@functools.total_ordering
@dataclass(frozen=True)
class Measure:
    """One measure at one cutoff, e.g. ``nDCG@10``. ``str()`` is the canonical spelling.

    ``cutoff`` ``None`` is the whole ranking (``MAP``, trec_eval's ``map``); ``rel`` is this measure's own
    relevance level (``P(rel=2)@10``), ``None`` for the evaluation's.
    """

    name: str
    cutoff: int | None = None
    rel: int | None = None

    def __post_init__(self) -> None:
        family = FAMILIES.get(self.name)
        if family is None:
            raise ConfigError(f"expected a measure among {_known()}, found {self.name!r}")
        if self.cutoff is None and not family.full:
            raise ConfigError(f"measure {self.name}: expected a cutoff such as {self.name}@10, found none")
        if self.cutoff is not None and not 1 <= self.cutoff <= MAX_CUTOFF:
            raise ConfigError(f"measure {self.name}: cutoff must be 1..{MAX_CUTOFF}, got {self.cutoff}")
        if self.rel is not None and not family.binary:
            raise ConfigError(
                f"measure {self.name}: expected no relevance level (only binary measures take rel=N), "
                f"found rel={self.rel}"
            )
        if self.rel is not None and self.rel < 1:
            raise ConfigError(
                f"measure {self.name}: expected a relevance level of 1 or more, found rel={self.rel}"
            )

    def _order(self) -> tuple[str, int, int]:
        return (self.name, MAX_CUTOFF + 1 if self.cutoff is None else self.cutoff, self.rel or 0)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Measure):
            return NotImplemented
        return self._order() < other._order()

    @classmethod
    def parse(cls, text: str | Measure) -> Measure:
        """Parse our spelling (``nDCG@10``, ``MAP``, ``P(rel=2)@10``), ir_measures' (``R@100``, ``AP``,
        ``nDCG(judged_only=True)@10``) or trec_eval's (``ndcg_cut_10``, ``ndcg_cut.10``, ``P_10``,
        ``recall_100``, ``map``, ``recip_rank``, ``bpref``, ``unj_10``); case-insensitive but for trec_eval's."""
        if isinstance(text, Measure):
            return text
        trec = _parse_trec(text)
        if trec is not None:
            return trec
        match = _PATTERN.match(text)
        if match is None:
            raise ConfigError(
                f"cannot parse measure {text!r}: expected NAME@CUTOFF such as 'nDCG@10' (or trec_eval's "
                f"ndcg_cut_10, ir_measures' P(rel=2)@10); known measures: {_known()}"
            )
        name, param, value, cutoff = match.groups()
        family = _BY_ALIAS.get(name.lower())
        if family is None:
            raise ConfigError(f"unknown measure {name!r} in {text!r}; known measures: {_known()}")
        rel: int | None = None
        if param is not None:
            if param == "judged_only" and family.name == "nDCG" and value.lower() == "true":
                family = FAMILIES["nDCG_judged"]
            elif param == "rel" and value.isdigit():
                rel = int(value)
            else:
                raise ConfigError(
                    f"measure {text!r}: expected the parameter rel=N (or nDCG's judged_only=True), "
                    f"found {param}={value}"
                )
        return cls(family.name, None if cutoff is None else int(cutoff), rel)

    @property
    def family(self) -> Family:
        return FAMILIES[self.name]

    @property
    def key(self) -> str:
        """Lower-case key used in results.json and per-query files: ``ndcg@10``, ``p@10``, ``map``."""
        return str(self).lower()

    def ranx_name(self, level: int = 1) -> str | None:
        """The ranx metric name (``ndcg@10``, ``precision@10-l2``), or ``None`` if we compute it."""
        base = self.family.ranx
        if base is None:
            return None
        name = base if self.cutoff is None else f"{base}@{self.cutoff}"
        rel = self.level(level)
        return f"{name}-l{rel}" if rel != 1 else name

    def level(self, level: int = 1) -> int:
        """The relevance level this measure scores with: its own, else ``level``; nDCG's gains are the
        grades at any level (as trec_eval's ``-l`` leaves ``ndcg_cut`` alone), so non-binary measures take 1."""
        if not self.family.binary:
            return 1
        return self.rel if self.rel is not None else level

    @property
    def ir_measures_name(self) -> str:
        """How ir_measures spells the measure (Unjudged maps to Judged, its complement)."""
        rel = f"(rel={self.rel})" if self.rel is not None else ""
        return f"{self.family.ir_measures}{rel}" + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def trec_name(self) -> str | None:
        """trec_eval's output name (``ndcg_cut_10``, ``P_10``, ``map``), or ``None`` when it has none."""
        if self.rel is not None:
            return None
        family = self.family
        if self.cutoff is None:
            return family.trec_full
        return f"{family.trec}_{self.cutoff}" if family.trec is not None else None

    def __str__(self) -> str:
        rel = f"(rel={self.rel})" if self.rel is not None else ""
        return f"{self.name}{rel}" + (f"@{self.cutoff}" if self.cutoff is not None else "")


def _parse_trec(text: str) -> Measure | None:
    """trec_eval's spelling (case-sensitive, as trec_eval's), or ``None`` when ``text`` is not one."""
    match = _TREC_PATTERN.match(text)
    if match is None:
        return None
    name, cutoff = match.groups()
    if cutoff is None:
        full = _TREC_FULL.get(name)
        return Measure(full.name) if full is not None else None
    family = _TREC_CUT.get(name)
    return Measure(family.name, int(cutoff)) if family is not None else None


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


def judged_only(measures: tuple[Measure, ...]) -> tuple[Measure, ...]:
    """trec_eval's ``-J`` as the harness has it (``eval.judged_only``): each nDCG measure scored judged-only;
    any other measure refused (the harness has no judged-only form of it)."""
    out = []
    for m in measures:
        if m.name not in ("nDCG", "nDCG_judged"):
            raise ConfigError(
                f"eval.judged_only: expected nDCG measures only (the harness scores nDCG judged-only, "
                f"trec_eval's -J), found {m}"
            )
        out.append(Measure("nDCG_judged", m.cutoff))
    return tuple(dict.fromkeys(out))


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
