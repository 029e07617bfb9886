"""Client-side fusion of several arms' runs with ranx.

A :class:`FusionSpec` is parsed from the CLI string given to ``--fusion``::

    rrf                         reciprocal rank fusion, k=60
    rrf:k=60
    combsum:norm=zmuv
    combmnz:norm=max
    wsum:norm=min-max,weights=0.3/0.7

Methods and normalisations live in registries (:data:`FUSION_METHODS`,
:data:`NORMALIZATIONS`). Weights follow the iteration order of the ``runs``
mapping given to :func:`fuse`.

Determinism: rank-based methods (rrf, isr, log_isr) see each arm ranked by score
descending then doc id descending (trec_eval's), with ties removed (ranx would otherwise
order ties by an unstable sort). The fused run is returned in that same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from base import ConfigError, timed
from harness._errors import RunError

from ._evaluate import check_qrels
from ._measures import Measure
from ._ranx import ranx as ranx_module
from ._types import QrelsLike, Run, RunLike, quiet_ranx, rank, rank_scores, sort_run

PARAM_K = "k"
PARAM_WEIGHTS = "weights"
PARAM_NORM = "norm"


@dataclass(frozen=True)
class FusionMethod:
    """One fusion method: its ranx name, parameters and defaults."""

    name: str
    ranx: str
    rank_based: bool
    default_norm: str | None
    params: frozenset[str] = frozenset()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    tunable: bool = False
    description: str = ""


FUSION_METHODS: dict[str, FusionMethod] = {
    m.name: m
    for m in (
        FusionMethod(
            "rrf",
            "rrf",
            True,
            None,
            frozenset({PARAM_K}),
            {PARAM_K: 60},
            True,
            "reciprocal rank fusion, sum of 1/(k+rank)",
        ),
        FusionMethod("isr", "isr", True, None, description="inverse square rank"),
        FusionMethod("log_isr", "log_isr", True, None, description="log inverse square rank"),
        FusionMethod("combsum", "sum", False, "min-max", description="sum of normalised scores"),
        FusionMethod("combmnz", "mnz", False, "min-max", description="combsum x number of arms retrieving"),
        FusionMethod("combmax", "max", False, "min-max", description="max of normalised scores"),
        FusionMethod("combmed", "med", False, "min-max", description="median of normalised scores"),
        FusionMethod("combanz", "anz", False, "min-max", description="combsum / number of arms retrieving"),
        FusionMethod(
            "wsum",
            "wsum",
            False,
            "min-max",
            frozenset({PARAM_WEIGHTS}),
            tunable=True,
            description="weighted sum of normalised scores",
        ),
        FusionMethod(
            "wmnz",
            "wmnz",
            False,
            "min-max",
            frozenset({PARAM_WEIGHTS}),
            tunable=True,
            description="weighted combmnz",
        ),
    )
}

NONE_NORM = "none"
DEFAULT = "default"
NORMALIZATIONS: dict[str, str | None] = {
    NONE_NORM: None,
    "min-max": "min-max",
    "zmuv": "zmuv",
    "max": "max",
    "sum": "sum",
    "rank": "rank",
}
"""Our spelling -> ranx's (``None``: scores are fused as they are)."""


def _known(names: Mapping[str, Any]) -> str:
    return ", ".join(names)


def _method(name: str) -> FusionMethod:
    method = FUSION_METHODS.get(name.strip().lower())
    if method is None:
        raise ConfigError(f"unknown fusion method {name!r}; known methods: {_known(FUSION_METHODS)}")
    return method


def _norm(name: str | None) -> str | None:
    if name is None:
        return None
    key = name.strip().lower().replace("_", "-")
    if key not in NORMALIZATIONS:
        raise ConfigError(f"unknown normalisation {name!r}; known: {_known(NORMALIZATIONS)}")
    return None if key == NONE_NORM else key


@dataclass(frozen=True)
class FusionSpec:
    """A fusion method with its normalisation and parameters; ``str()`` round-trips through :meth:`parse`."""

    method: str = "rrf"
    norm: str | None = DEFAULT
    """A key of :data:`NORMALIZATIONS`; ``None`` or ``"none"``: raw scores; ``"default"``: the method's."""
    k: int | None = None
    """rrf's k; ``None``: the method's default (60)."""
    weights: tuple[float, ...] | None = None
    """One weight per arm, in arm order (wsum, wmnz)."""

    def __post_init__(self) -> None:
        method = _method(self.method)
        object.__setattr__(self, "method", method.name)
        object.__setattr__(self, "norm", _norm(method.default_norm if self.norm == DEFAULT else self.norm))
        if PARAM_K in method.params:
            if self.k is None:
                object.__setattr__(self, "k", method.defaults[PARAM_K])
            elif isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
                raise ConfigError(f"fusion {method.name}: k must be a positive integer, got {self.k!r}")
        elif self.k is not None:
            raise ConfigError(f"fusion {method.name} takes no k")
        if PARAM_WEIGHTS in method.params:
            if not self.weights:
                raise ConfigError(
                    f"fusion {method.name} needs weights, e.g. '{method.name}:weights=0.3/0.7' "
                    "(one per arm, in arm order), or tune them held out (on a train split or k folds)"
                )
            weights = tuple(float(w) for w in self.weights)
            if any(w < 0 for w in weights) or not any(w > 0 for w in weights):
                raise ConfigError(f"fusion {method.name}: weights must be >= 0 and not all 0, got {weights}")
            object.__setattr__(self, "weights", weights)
        elif self.weights is not None:
            raise ConfigError(f"fusion {method.name} takes no weights")

    @classmethod
    def default(cls, method: str) -> FusionSpec:
        """The method with its default normalisation and parameters."""
        return cls(method=method)

    @classmethod
    def parse(cls, text: str) -> FusionSpec:
        """Parse ``METHOD[:key=value,...]``; keys: ``norm``, ``k``, ``weights`` (``a/b/...``)."""
        head, _, tail = text.strip().partition(":")
        if not head:
            raise ConfigError(f"empty fusion spec {text!r}; expected e.g. 'rrf' or 'wsum:weights=0.3/0.7'")
        method = _method(head)
        allowed = {PARAM_NORM, *method.params}
        norm: str | None = DEFAULT
        k: int | None = None
        weights: tuple[float, ...] | None = None
        for item in (p for p in tail.split(",") if p.strip()) if tail else ():
            key, eq, value = (s.strip() for s in item.partition("="))
            if not eq or not value:
                raise ConfigError(f"fusion spec {text!r}: expected key=value, found {item!r}")
            if key not in allowed:
                raise ConfigError(
                    f"fusion spec {text!r}: {method.name} takes {', '.join(sorted(allowed))}; found {key!r}"
                )
            try:
                if key == PARAM_NORM:
                    norm = value
                elif key == PARAM_K:
                    k = int(value)
                else:
                    weights = tuple(float(w) for w in value.split("/"))
            except ValueError as err:
                raise ConfigError(f"fusion spec {text!r}: bad value for {key}: {value!r}") from err
        return cls(method=method.name, norm=norm, k=k, weights=weights)

    @property
    def info(self) -> FusionMethod:
        return FUSION_METHODS[self.method]

    def params(self) -> dict[str, Any]:
        """Keyword arguments for the ranx fusion function."""
        out: dict[str, Any] = {}
        if self.k is not None:
            out[PARAM_K] = self.k
        if self.weights is not None:
            out[PARAM_WEIGHTS] = list(self.weights)
        return out

    def to_dict(self) -> dict[str, Any]:
        """For the manifest: ``{"method", "norm", "k"?, "weights"?, "spec"}``."""
        return {"method": self.method, "norm": self.norm or NONE_NORM, **self.params(), "spec": str(self)}

    def __str__(self) -> str:
        parts: list[str] = []
        if self.norm is not None:
            parts.append(f"norm={self.norm}")
        elif self.info.default_norm is not None:
            parts.append(f"norm={NONE_NORM}")
        if self.k is not None:
            parts.append(f"k={self.k}")
        if self.weights is not None:
            parts.append("weights=" + "/".join(repr(w) for w in self.weights))
        return self.method + (":" + ",".join(parts) if parts else "")


DEFAULT_FUSION = FusionSpec.default("rrf")


#: stands in for every result of an arm that found nothing at all (ranx cannot hold an empty run);
#: it is fused like any document and removed from the fused run, so the other arms' documents score
#: exactly as if the empty arm were there with no results (it contributes 0 to each of them)
PLACEHOLDER = "\x00r2med-no-results"


def _ranx_runs(runs: Mapping[str, RunLike], qids: list[str], rank_based: bool) -> list[Any]:
    ranx_run = ranx_module().Run
    out = []
    for arm, run in runs.items():
        data: dict[str, dict[str, float]] = {}
        for qid in qids:
            results = run.get(qid) or {}
            data[qid] = rank_scores(results, qid) if rank_based else dict(rank(results, qid))
        if not any(data.values()):
            data[qids[0]] = {PLACEHOLDER: 1.0}
        out.append(ranx_run(data, name=arm))
    return out


def _check_arms(runs: Mapping[str, RunLike], spec: FusionSpec) -> None:
    if len(runs) < 2:
        raise ConfigError(f"fusion needs at least 2 arms, got {len(runs)}: {list(runs)}")
    if spec.weights is not None and len(spec.weights) != len(runs):
        raise ConfigError(
            f"fusion {spec}: {len(spec.weights)} weights for {len(runs)} arms ({', '.join(runs)}); "
            "expected one weight per arm, in that order"
        )


@timed("fuse")
def fuse(runs: Mapping[str, RunLike], spec: FusionSpec | str = DEFAULT_FUSION) -> Run:
    """Fuse the arms' runs (``{arm: run}``) into one run with ``ranx.fuse``.

    Queries missing from an arm, or without results in it, are fused from the other
    arms alone (the empty arm contributes 0), even when an arm found nothing for any
    query. The returned run covers the union of queries, in id order, each ranked by
    score descending then doc id descending (trec_eval's order).
    """
    ranx = ranx_module()

    spec = FusionSpec.parse(spec) if isinstance(spec, str) else spec
    _check_arms(runs, spec)
    qids = sorted({qid for run in runs.values() for qid in run})
    if not qids:
        raise RunError("no queries to fuse: every arm's run is empty")
    ranx_runs = _ranx_runs(runs, qids, spec.info.rank_based)
    try:
        with quiet_ranx():
            fused = ranx.fuse(ranx_runs, norm=spec.norm, method=spec.info.ranx, params=spec.params())
    except Exception as err:  # ranx raises AssertionError/ValueError/numba errors
        raise RunError(f"ranx could not fuse {', '.join(runs)} with {spec}") from err
    as_dict = fused.to_dict()
    return sort_run(
        {qid: {d: float(s) for d, s in as_dict.get(qid, {}).items() if d != PLACEHOLDER} for qid in qids}
    )


def optimize_fusion(
    qrels_train: QrelsLike,
    runs_train: Mapping[str, RunLike],
    method: str = "wsum",
    norm: str | None = DEFAULT,
    metric: Measure | str = "ndcg@10",
    step: float = 0.1,
) -> FusionSpec:
    """Tune ``method``'s parameters with ``ranx.optimize_fusion`` on a TRAIN split.

    The caller guarantees that ``qrels_train`` and ``runs_train`` hold no test
    query. Runs are restricted to the judged queries (missing ones are empty).
    ``norm="default"`` takes the method's default normalisation. Weights are
    searched on a grid of ``step``; rrf searches k in 10..100 by 10.
    """
    ranx = ranx_module()

    info = _method(method)
    if not info.tunable:
        tunable = ", ".join(m.name for m in FUSION_METHODS.values() if m.tunable)
        raise ConfigError(f"fusion {info.name} has no parameters to tune; tunable methods: {tunable}")
    measure = Measure.parse(metric)
    if measure.ranx_name() is None:
        raise ConfigError(f"cannot tune fusion on {measure}: it is not a quality measure")
    norm_key = _norm(info.default_norm if norm == DEFAULT else norm)
    probe = (
        FusionSpec(method=info.name, norm=norm_key, weights=(1.0,) * len(runs_train))
        if PARAM_WEIGHTS in info.params
        else FusionSpec(method=info.name, norm=norm_key)
    )
    _check_arms(runs_train, probe)
    judged = check_qrels(qrels_train)
    qids = sorted(judged)
    ranx_runs = _ranx_runs(runs_train, qids, info.rank_based)
    kwargs: dict[str, Any] = {"show_progress": False}
    if PARAM_WEIGHTS in info.params:
        kwargs["step"] = step
    try:
        with quiet_ranx():
            best = ranx.optimize_fusion(
                ranx.Qrels({q: judged[q] for q in qids}),
                ranx_runs,
                norm=norm_key,
                method=info.ranx,
                metric=measure.ranx_name(),
                **kwargs,
            )
    except Exception as err:
        raise RunError(f"ranx could not tune {info.name} on {len(qids)} train queries") from err
    if PARAM_WEIGHTS in info.params:
        return FusionSpec(method=info.name, norm=norm_key, weights=tuple(float(w) for w in best["weights"]))
    return FusionSpec(method=info.name, norm=norm_key, k=int(best["k"]))
