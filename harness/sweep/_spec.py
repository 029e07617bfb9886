"""``SweepSpec``: the grid of a fusion sweep, parsed once from its text (``sweep.grid``).

Grammar (axes separated by ``;``, values by ``,``; whitespace is ignored)::

    SPEC   := NAME | AXIS (";" AXIS)*
    AXIS   := KEY "=" VALUE ("," VALUE)*
    KEY    := method | norm | weights | k
    VALUE  := a method (rrf, wsum, combmnz, ...) | a normalisation (min-max, zmuv, sum, none, ...)
            | NUMBER | NUMBER "/" NUMBER ("/" NUMBER)*        explicit weights, one per arm
            | NUMBER ".." NUMBER "/" STEP                      an inclusive range

For example ``method=rrf,wsum,combmnz;norm=min-max,zmuv,sum;weights=0.1..0.9/0.1;k=20,60``. Each
method takes only the axes it has: ``norm`` the score-based methods (rank-based ones fuse ranks,
where a normalisation changes nothing), ``weights`` wsum and wmnz, ``k`` rrf. An axis no listed
method takes is an error, as is a method missing: the grid is the union over methods of the
product of that method's axes. A single number ``w`` as weights means ``w/(1-w)`` for two arms
(the first arm's share). ``NAME`` is one of :data:`NAMED_GRIDS`.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from base import ConfigError
from harness.eval import FUSION_METHODS, NORMALIZATIONS, FusionMethod, FusionSpec

AXIS_METHOD, AXIS_NORM, AXIS_WEIGHTS, AXIS_K = "method", "norm", "weights", "k"
AXES = (AXIS_METHOD, AXIS_NORM, AXIS_WEIGHTS, AXIS_K)
MAX_CONFIGURATIONS = 5000

#: named grids: ``sweep.grid = "default"`` and friends
NAMED_GRIDS: dict[str, str] = {
    "default": "method=rrf,combsum,combmnz,wsum;norm=min-max,zmuv,sum;weights=0.1..0.9/0.1;k=10,60,100",
    "weights": "method=wsum;weights=0.0..1.0/0.1",
    "rrf": "method=rrf;k=10..100/10",
}

Weights = tuple[float, ...]


def _err(text: str, message: str) -> ConfigError:
    return ConfigError(f"grid {text!r}: {message}")


def _number(text: str, value: str, what: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise _err(text, f"expected a number for {what}, found {value!r}") from None


def _range(text: str, value: str) -> tuple[float, ...]:
    """``a..b/step``: a, a+step, ... up to b inclusive (rounded to 10 decimals)."""
    bounds, slash, step_text = value.partition("/")
    low_text, _, high_text = bounds.partition("..")
    if not slash:
        raise _err(text, f"expected a range as LOW..HIGH/STEP (e.g. 0.1..0.9/0.1), found {value!r}")
    low, high = _number(text, low_text, "a range start"), _number(text, high_text, "a range end")
    step = _number(text, step_text, "a range step")
    if step <= 0 or high < low:
        raise _err(text, f"expected LOW <= HIGH and a positive STEP in {value!r}")
    count = int((high - low) / step + 1e-9) + 1
    if count > MAX_CONFIGURATIONS:
        raise _err(text, f"range {value!r} has {count} values; expected at most {MAX_CONFIGURATIONS}")
    return tuple(round(low + i * step, 10) for i in range(count))


def _weights(text: str, value: str) -> tuple[Weights, ...]:
    if ".." in value:
        return tuple((w,) for w in _range(text, value))
    return (tuple(_number(text, w, "a weight") for w in value.split("/")),)


def _ks(text: str, value: str) -> tuple[int, ...]:
    found = _range(text, value) if ".." in value else (_number(text, value, "k"),)
    if any(k != int(k) or k < 1 for k in found):
        raise _err(text, f"expected k as positive integers, found {value!r}")
    return tuple(int(k) for k in found)


def _split_axes(text: str) -> dict[str, list[str]]:
    axes: dict[str, list[str]] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        key, eq, values = (s.strip() for s in part.partition("="))
        if not eq or not values:
            raise _err(text, f"expected AXIS=VALUE[,VALUE...] (axes {', '.join(AXES)}), found {part!r}")
        if key not in AXES:
            raise _err(text, f"unknown axis {key!r}; expected one of {', '.join(AXES)}")
        if key in axes:
            raise _err(text, f"axis {key!r} is given twice; expected each axis once")
        axes[key] = [v.strip() for v in values.split(",") if v.strip()]
    if AXIS_METHOD not in axes:
        named = ", ".join(NAMED_GRIDS)
        raise _err(text, f"expected a grid name ({named}) or a method axis, e.g. 'method=rrf,wsum'")
    return axes


def _methods(text: str, names: list[str]) -> tuple[str, ...]:
    unknown = [n for n in names if n.lower() not in FUSION_METHODS]
    if unknown:
        raise _err(text, f"unknown method {unknown[0]!r}; expected among {', '.join(FUSION_METHODS)}")
    return tuple(dict.fromkeys(n.lower() for n in names))


def _norms(text: str, names: list[str]) -> tuple[str, ...]:
    keys = [n.lower().replace("_", "-") for n in names]
    unknown = [n for n, k in zip(names, keys, strict=True) if k not in NORMALIZATIONS]
    if unknown:
        raise _err(text, f"unknown norm {unknown[0]!r}; expected among {', '.join(NORMALIZATIONS)}")
    return tuple(dict.fromkeys(keys))


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """A fusion grid: methods, and the normalisations, weights and k's each takes.

    Empty ``norms``/``ks`` mean each method's default; empty ``weights`` are allowed only when no
    method takes weights. ``str()`` gives the text as given, :meth:`canonical` every value; :meth:`parse`
    reads both back to an equal spec.
    """

    methods: tuple[str, ...]
    norms: tuple[str, ...] = ()
    weights: tuple[Weights, ...] = ()
    ks: tuple[int, ...] = ()
    text: str | None = field(default=None, compare=False)
    """As given (a grid name, or the axes with their ranges); ``str()`` shows it, :meth:`canonical` lists all."""

    @classmethod
    def parse(cls, text: str) -> SweepSpec:
        raw = text.strip()
        if raw.lower() in NAMED_GRIDS:
            return dataclasses.replace(cls.parse(NAMED_GRIDS[raw.lower()]), text=raw.lower())
        axes = _split_axes(raw)
        spec = cls(
            methods=_methods(raw, axes[AXIS_METHOD]),
            norms=_norms(raw, axes.get(AXIS_NORM, [])),
            weights=tuple(w for v in axes.get(AXIS_WEIGHTS, []) for w in _weights(raw, v)),
            ks=tuple(dict.fromkeys(k for v in axes.get(AXIS_K, []) for k in _ks(raw, v))),
            text="".join(raw.split()),
        )
        spec.check(raw)
        return spec

    @classmethod
    def for_method(cls, fusion: FusionSpec) -> SweepSpec:
        """The grid ``--tune-on`` searches when no ``--sweep-fusion`` is given: the ``--fusion`` method's
        own parameter (rrf: k 10..100; wsum/wmnz: weights 0..1 by 0.1), any other method as wsum."""
        info = fusion.info if fusion.info.tunable else FUSION_METHODS["wsum"]
        norms = (fusion.norm or "none",) if not info.rank_based else ()
        if info.name == "rrf":
            return cls.parse("rrf")
        return cls((info.name,), norms, tuple((w,) for w in _range("", "0.0..1.0/0.1")))

    @classmethod
    def fixed(cls, fusion: FusionSpec) -> SweepSpec:
        """A grid of one configuration, ``fusion`` itself: a sweep over template parameters alone."""
        return cls(
            (fusion.method,),
            () if fusion.info.rank_based else (fusion.norm or "none",),
            (fusion.weights,) if fusion.weights else (),
            (fusion.k,) if fusion.k is not None else (),
            text=str(fusion),
        )

    def check(self, text: str) -> None:
        """Every axis given is taken by at least one listed method; weights are there when needed."""
        infos = [FUSION_METHODS[m] for m in self.methods]
        for axis, given in ((AXIS_NORM, self.norms), (AXIS_WEIGHTS, self.weights), (AXIS_K, self.ks)):
            if given and not any(_takes(i, axis) for i in infos):
                able = [m.name for m in FUSION_METHODS.values() if _takes(m, axis)]
                raise _err(text, f"no listed method takes {axis}; methods that do: {', '.join(able)}")
        needy = [i.name for i in infos if _takes(i, AXIS_WEIGHTS)]
        if needy and not self.weights:
            raise _err(text, f"{needy[0]} needs a weights axis, e.g. weights=0.1..0.9/0.1")

    def configurations(self, arms: int) -> tuple[FusionSpec, ...]:
        """Every fusion of the grid for ``arms`` input arms, in grid order, without duplicates."""
        out: dict[str, FusionSpec] = {}
        for method in self.methods:
            info = FUSION_METHODS[method]
            norms: tuple[str | None, ...] = (
                (None,) if info.rank_based else (self.norms or (info.default_norm or "none",))
            )
            takes_weights = _takes(info, AXIS_WEIGHTS)
            weights = tuple(_expand(w, arms, str(self)) for w in self.weights) if takes_weights else ()
            ks = self.ks if _takes(info, AXIS_K) else ()
            for norm, weight, k in itertools.product(norms, weights or (None,), ks or (None,)):
                if weight is not None and not any(x > 0 for x in weight):
                    continue  # all-zero weights fuse nothing
                spec = FusionSpec(method=method, norm=norm, k=k, weights=weight)
                out.setdefault(str(spec), spec)
        return tuple(out.values())

    def __str__(self) -> str:
        return self.text or self.canonical()

    def canonical(self) -> str:
        """Every value of every axis spelled out: what the grid is, whatever name or range gave it."""
        parts = [f"{AXIS_METHOD}={','.join(self.methods)}"]
        if self.norms:
            parts.append(f"{AXIS_NORM}={','.join(self.norms)}")
        if self.weights:
            parts.append(f"{AXIS_WEIGHTS}={','.join('/'.join(f'{x:g}' for x in w) for w in self.weights)}")
        if self.ks:
            parts.append(f"{AXIS_K}={','.join(map(str, self.ks))}")
        return ";".join(parts)


def _takes(info: FusionMethod, axis: str) -> bool:
    """Whether a method has ``axis``: norm (score-based methods), weights or k (its parameters)."""
    return not info.rank_based if axis == AXIS_NORM else axis in info.params


def _expand(weights: Weights, arms: int, text: str) -> Weights:
    """One weight per arm: a single ``w`` is ``w/(1-w)`` for two arms; an explicit tuple must fit."""
    if len(weights) == 1 and arms == 2:
        w = weights[0]
        if not 0 <= w <= 1:
            raise _err(text, f"expected a single weight between 0 and 1 (the first arm's share), found {w:g}")
        return (w, round(1 - w, 10))
    if len(weights) != arms:
        raise _err(
            text, f"expected {arms} weights per value (one per fused arm, as a/b/...), found {len(weights)}"
        )
    if any(w < 0 for w in weights):
        raise _err(text, f"expected weights >= 0, found {'/'.join(f'{w:g}' for w in weights)}")
    return weights
