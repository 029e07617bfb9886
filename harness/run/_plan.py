"""Plan: which datasets, with which judgments, which arms (by what the engine can do), which models, which
run directory.

Planning loads and validates every dataset and expansion before anything is sent to the engine, so a
typo in the last dataset fails in a second, not after an hour of indexing. A judgments source that needs
nothing of the search (``judgments.source``: the dataset's own, a click log) judges each dataset here.
The arms are a mode's built-in arms or the experiment file's own; either way each one is planned the
same way (an expanded variant per expansion, a reranked arm per rerank). The config hash (the run directory's default name) covers
everything that changes results: the experiment's identity, the data fingerprints, the engine and models.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import ConfigError, DataError
from harness.eval import FusionSpec
from harness.expand import Expansion, select_expansion
from harness.experiment import Experiment, identity
from harness.judgments.sources import BeforeSearch, Judged
from harness.strategies import ARMS, MODES, Arm, FusedArm, RerankedArm, SearchArm, TemplateArm, arm_support
from indexer import KNN, Capabilities, Dataset, ModelSpec, judged_dataset, load_dataset, resolve_specs

RERANK_SUFFIX = ">rerank"


@dataclass(frozen=True, slots=True)
class PlannedArm:
    """An arm as this run runs it: the spec, with the expansion its searches use (if any)."""

    name: str
    spec: Arm
    expansion: Expansion | None = None

    @property
    def inputs(self) -> tuple[str, ...]:
        """The arms a fused arm is fused from (in this run's names)."""
        return (
            tuple(_variant(a, self.expansion) for a in self.spec.inputs)
            if isinstance(self.spec, FusedArm)
            else ()
        )

    @property
    def compare_to(self) -> tuple[str, ...]:
        """The arms this one is tested against: its spec's, or for an expanded arm the same arm without it."""
        return (self.spec.name,) if self.expansion is not None else self.spec.compare_to

    @property
    def searched(self) -> bool:
        """Whether the engine answers it (a built-in search arm or a template arm)."""
        return isinstance(self.spec, SearchArm | TemplateArm)

    @property
    def own(self) -> bool:
        """Whether it is one of the experiment file's own arms (its target is recorded)."""
        return isinstance(self.spec, TemplateArm) or (
            isinstance(self.spec, FusedArm) and self.spec.fusion is not None
        )


@dataclass(frozen=True, slots=True)
class DatasetPlan:
    """One dataset's plan: the dataset as its judgments source left it before the search (the one searched,
    tuned and, unless a source judges after the search, scored), its expansion and its arms."""

    dataset: Dataset
    expansion: Expansion | None
    arms: tuple[PlannedArm, ...]
    judged: Judged | None = None  # what the judgments source made before the search (None: nothing)

    @property
    def search_arms(self) -> list[PlannedArm]:
        return [a for a in self.arms if a.searched]

    @property
    def fused_arms(self) -> list[PlannedArm]:
        return [a for a in self.arms if isinstance(a.spec, FusedArm)]

    @property
    def reranked_arms(self) -> list[PlannedArm]:
        return [a for a in self.arms if isinstance(a.spec, RerankedArm)]

    @property
    def weighted_arms(self) -> list[PlannedArm]:
        """Search arms whose bodies need lexical/vector weights (the in-engine weighted sum)."""
        return [a for a in self.search_arms if isinstance(a.spec, SearchArm) and a.spec.needs_weights]

    def fusion_of(self, arm: PlannedArm, default: FusionSpec) -> FusionSpec:
        """The fusion of a fused arm: its own, else the run's (``default``)."""
        assert isinstance(arm.spec, FusedArm)
        return arm.spec.fusion or default

    @property
    def takes_run_fusion(self) -> bool:
        """Whether a fused arm takes the run's fusion (the built-in hybrid has none of its own)."""
        return any(isinstance(a.spec, FusedArm) and a.spec.fusion is None for a in self.arms)

    @property
    def primary_fused(self) -> PlannedArm | None:
        """The fused arm a sweep chooses on (the one named, else the first searched without an expansion)."""
        return next((a for a in self.fused_arms if a.expansion is None), None)


@dataclass(frozen=True, slots=True)
class RunPlan:
    experiment: Experiment
    datasets: tuple[DatasetPlan, ...]
    model: ModelSpec | None  # the built-in arms' embedding model (the first arm's for the file's arms)
    identity: dict[str, Any]
    config_hash: str
    run_dir: Path
    notices: tuple[str, ...] = ()
    analysis: str = ""  # the analysis chain of the run's indices (asked for, or the engine's best)

    @property
    def run_id(self) -> str:
        return self.run_dir.name


def _variant(name: str, expansion: Expansion | None) -> str:
    return f"{name}+{expansion.method.name}" if expansion is not None else name


def mode_arms(mode: str, caps: Capabilities) -> tuple[list[Arm], list[str]]:
    """The arms of ``mode`` the engine can run, and a notice for each probe-gated arm it cannot.

    Arms that need query vectors need the cluster's k-NN: without it the run fails with the probe's
    reason (:class:`~base.CapabilityMissing`, "the cluster has no k-NN plugin ...") before
    anything is indexed; lexical runs are unaffected.
    """
    arms: list[Arm] = []
    notices: list[str] = []
    for name in MODES[mode]:
        arm = ARMS[name]
        support = arm_support(arm, caps)
        if support.skipped:
            notices.append(f"arm {name} is skipped: {support.why}")
            continue
        if support.exact:
            notices.append(f"arm {name} runs as exact kNN: {support.why}")
        arms.append(arm)
    if needs_vectors(arms):
        caps.require(KNN)
    return arms, notices


def experiment_arms(exp: Experiment, caps: Capabilities) -> tuple[list[Arm], list[str]]:
    """The experiment's arms: its mode's built-in ones (probe-gated), or the file's own."""
    if exp.mode is not None:
        return mode_arms(exp.mode, caps)
    fused: list[Arm] = list(exp.fused)
    return [*exp.arms, *fused], []


def needs_vectors(arms: Sequence[Arm]) -> bool:
    return any(isinstance(a, SearchArm) and a.needs_vector for a in arms)


def load_datasets(exp: Experiment) -> list[Dataset]:
    if exp.data.queries is not None and exp.data.qrels is not None:
        return [judged_dataset(exp.datasets[0], exp.data.queries, exp.data.qrels)]
    specs = [s for d in exp.datasets for s in resolve_specs(d)]
    try:
        datasets = [load_dataset(s, split=exp.data.split, revision=exp.data.revision) for s in specs]
    except DataError as exc:
        if any(s.lower().startswith("r2med") for s in specs):
            raise DataError(
                "R2MED could not be loaded (see below); to try the harness on the bundled SciFact sample "
                "instead, run with --dataset sample",
                exc.problems,
            ) from exc
        raise
    names = [d.name for d in datasets]
    if len(set(names)) != len(names):
        raise ConfigError(f"the same dataset was given twice: expected each dataset once, found {names}")
    return datasets


def judged_datasets(exp: Experiment) -> list[Judged]:
    """The datasets with the judgments the experiment's source makes before the search (``judgments.source``:
    the dataset's own, a click log's; an LLM judge's come after the search)."""
    ctx = BeforeSearch(exp.judgments.mode, exp.connection_settings)
    return [exp.judgments.spec.before_search(ds, ctx) for ds in load_datasets(exp)]


def rerank_inputs(exp: Experiment, arms: Sequence[Arm]) -> tuple[str, ...]:
    """The arms the rerank re-scores: those named, else the main arm (the arm named like the mode; of the
    file's arms, the first fused one, else the first)."""
    if exp.rerank.model is None:
        return ()
    if exp.rerank.arms:
        return exp.rerank.arms
    if exp.mode is not None:
        return (exp.mode,)
    return (next((a.name for a in arms if isinstance(a, FusedArm)), arms[0].name),)


def _dataset_plan(judged: Judged, arms: Sequence[Arm], exp: Experiment) -> DatasetPlan:
    ds = judged.dataset
    expansion = select_expansion(ds, exp.expansion.method, exp.eval.rules) if exp.expansion.method else None
    variants = [None, expansion] if expansion is not None else [None]
    planned = [PlannedArm(_variant(a.name, e), a, e) for e in variants for a in arms]
    names = {a.name for a in planned}
    for source in rerank_inputs(exp, arms):
        if source not in names:
            raise ConfigError(
                f"expected the arm to rerank to be an arm of this run ({sorted(names)}), found {source!r}"
            )
        planned.append(PlannedArm(source + RERANK_SUFFIX, RerankedArm(source + RERANK_SUFFIX, source)))
    return DatasetPlan(ds, expansion, tuple(planned), judged if judged.used is not None else None)


def plan_identity(
    exp: Experiment,
    plans: Sequence[DatasetPlan],
    caps: Capabilities,
    models: Mapping[str, ModelSpec],
    reranker: Mapping[str, str] | None,
    analysis: str,
) -> dict[str, Any]:
    """The experiment's identity with what it resolved to: data, expansions, engine, analysis, models."""
    ident = identity(exp)
    ident["fingerprints"] = {p.dataset.name: p.dataset.fingerprint.combined for p in plans}
    chosen = {p.dataset.name: p.expansion for p in plans if p.expansion is not None}
    if chosen:  # a regenerated expansion set is another run, never a resumed one
        ident["expansions"] = {name: e.content_sha256 for name, e in chosen.items()}
    # the same flags on another engine (or with another analysis chain) are another run, never a resume
    ident["engine"] = {"product": caps.flavour, "version": caps.version}
    if exp.mode is not None:
        # (experiments with their own arms recorded their models per arm and no chain: their hash stays)
        ident["analysis"] = analysis
        model = models.get("")
        if model is not None:
            # id, revision (+ backend and precision off the torch fp32 reference, so old runs keep their hash)
            ident["model"] = {**model.identity(), "query_prompt": model.query_prompt}
            if model.document_prompt:  # it builds another index (empty: the hash runs made before had)
                ident["model"]["document_prompt"] = model.document_prompt
    else:
        ident["models"] = {
            name: {**m.identity(), "query_prompt": m.query_prompt} for name, m in models.items() if name
        }
    spec = exp.rerank_spec
    if reranker is not None and spec is not None:
        ident["rerank"] = {**reranker, "depth": spec.depth}
    return ident


def plan_run(
    exp: Experiment,
    caps: Capabilities,
    models: Mapping[str, ModelSpec] | Callable[[Sequence[Dataset]], Mapping[str, ModelSpec]],
    reranker: Mapping[str, str] | None = None,
    *,
    analysis: str = "",
) -> RunPlan:
    """Load the data and decide the arms; ``models``: the embedding model of each arm that embeds queries
    (``""``: the built-in arms' model), or what makes them from the loaded datasets; ``reranker`` the
    reranker's identity, ``analysis`` the indices' chain."""
    arms, notices = experiment_arms(exp, caps)
    plans = tuple(_dataset_plan(judged, arms, exp) for judged in judged_datasets(exp))
    if callable(models):
        models = models([p.dataset for p in plans])
    ident = plan_identity(exp, plans, caps, models, reranker, analysis)
    config_hash = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:10]
    stem = f"-{exp.source.stem}" if exp.source is not None and exp.mode is None else ""
    run_dir = exp.output.dir or Path("runs") / f"{exp.label}{stem}-{config_hash}"
    model = models.get("") or next(iter(models.values()), None)
    return RunPlan(exp, plans, model, ident, config_hash, run_dir, tuple(notices), analysis)
