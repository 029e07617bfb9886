"""Plan: which datasets, which arms (by what the engine can do), which model, which run directory.

Planning loads and validates every dataset and expansion before anything is sent to
the engine, so a typo in the last ``--dataset`` fails in a second, not after an hour of
indexing. The config hash (the run directory's default name) covers everything that
changes results: the config's identity, the data fingerprints and the model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.expand import Expansion, select_expansion
from harness.run._config import RunConfig
from harness.strategies import ARMS, MODES, Arm, FusedArm, RerankedArm, SearchArm
from indexer import (
    KNN,
    Capabilities,
    ConfigError,
    DataError,
    Dataset,
    ModelSpec,
    load_dataset,
    resolve_specs,
)


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


@dataclass(frozen=True, slots=True)
class DatasetPlan:
    dataset: Dataset
    expansion: Expansion | None
    arms: tuple[PlannedArm, ...]

    @property
    def search_arms(self) -> list[PlannedArm]:
        return [a for a in self.arms if isinstance(a.spec, SearchArm)]

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


@dataclass(frozen=True, slots=True)
class RunPlan:
    config: RunConfig
    datasets: tuple[DatasetPlan, ...]
    model: ModelSpec | None
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
    reason (:class:`~indexer.CapabilityMissing`, "the cluster has no k-NN plugin ...") before
    anything is indexed; lexical runs are unaffected.
    """
    arms: list[Arm] = []
    notices: list[str] = []
    for name in MODES[mode]:
        arm = ARMS[name]
        needed = arm.needs_capability
        if needed is not None and not caps.has(needed):
            notices.append(
                f"arm {name} is skipped: {caps.missing.get(needed, f'the cluster lacks {needed}')}"
            )
            continue
        arms.append(arm)
    if needs_vectors(arms):
        caps.require(KNN)
    return arms, notices


def needs_vectors(arms: Sequence[Arm]) -> bool:
    return any(isinstance(a, SearchArm) and a.needs_vector for a in arms)


def load_datasets(config: RunConfig) -> list[Dataset]:
    specs = [s for d in config.datasets for s in resolve_specs(d)]
    try:
        datasets = [load_dataset(s, split=config.split, revision=config.revision) for s in specs]
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


RERANK_SUFFIX = ">rerank"


def rerank_inputs(config: RunConfig, arms: Sequence[Arm]) -> tuple[str, ...]:
    """The arms ``--rerank`` re-scores: those named, or the mode's main arm (the arm named like the mode)."""
    if config.rerank is None:
        return ()
    return config.rerank_arms or (config.mode,)


def _dataset_plan(ds: Dataset, arms: Sequence[Arm], config: RunConfig) -> DatasetPlan:
    expansion = select_expansion(ds, config.expansion) if config.expansion else None
    variants = [None, expansion] if expansion is not None else [None]
    planned = [PlannedArm(_variant(a.name, exp), a, exp) for exp in variants for a in arms]
    names = {a.name for a in planned}
    for source in rerank_inputs(config, arms):
        if source not in names:
            raise ConfigError(
                f"expected --rerank-arm to name an arm of this run ({sorted(names)}), found {source!r}"
            )
        planned.append(PlannedArm(source + RERANK_SUFFIX, RerankedArm(source + RERANK_SUFFIX, source)))
    return DatasetPlan(ds, expansion, tuple(planned))


def plan_run(
    config: RunConfig,
    caps: Capabilities,
    model: ModelSpec | None,
    reranker: dict[str, str] | None = None,
    *,
    analysis: str = "",
) -> RunPlan:
    """Load the data and decide the arms; ``model`` is the embedding model when the arms need one,
    ``reranker`` the identity of the ``--rerank`` model, ``analysis`` the chain the indices use."""
    arms, notices = mode_arms(config.mode, caps)
    datasets = load_datasets(config)
    plans = tuple(_dataset_plan(ds, arms, config) for ds in datasets)
    identity = config.identity()
    identity["fingerprints"] = {d.name: d.fingerprint.combined for d in datasets}
    chosen = {p.dataset.name: p.expansion for p in plans if p.expansion is not None}
    if chosen:  # a regenerated expansion set is another run, never a resumed one
        identity["expansions"] = {name: exp.content_sha256 for name, exp in chosen.items()}
    # the same flags on another engine (or with another analysis chain) are another run, never a resume
    identity["engine"] = {"product": caps.flavour, "version": caps.version}
    identity["analysis"] = analysis
    if model is not None:
        # id, revision (+ backend and precision off the torch fp32 reference, so old runs keep their hash)
        identity["model"] = {**model.identity(), "query_prompt": model.query_prompt}
        if model.document_prompt:  # it builds another index (empty: the hash runs made before had)
            identity["model"]["document_prompt"] = model.document_prompt
    if reranker is not None and config.rerank_spec is not None:
        identity["rerank"] = {**reranker, "depth": config.rerank_spec.depth}
    config_hash = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
    run_dir = config.output or Path("runs") / f"{config.mode}-{config_hash}"
    return RunPlan(config, plans, model, identity, config_hash, run_dir, tuple(notices), analysis)
