"""Where each arm searches: its cluster (the run's, or an arm's own), its index, and its embedding model.

The built-in arms search the dataset's harness index on the run's cluster with the run's model; an
experiment's template arm searches the index it names (which must exist), or the dataset's harness
index on its cluster. Each cluster is connected once, and the dataset's index is built (or checked) once
per cluster that needs it, with the embedding models of the arms that search it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rich.console import Console

from base import CapabilityMissing, ConfigError
from harness.experiment import Experiment
from harness.run._plan import DatasetPlan, needs_vectors
from harness.strategies import Arm, TemplateArm
from indexer import (
    SEARCH_TEMPLATE,
    Backend,
    CachedEmbedder,
    Capabilities,
    ConnectionSettings,
    Dataset,
    IndexSummary,
    build_index,
    connect,
)

#: the key of the built-in arms' embedder (template arms' embedders are keyed by the arm's name)
BUILTIN = ""


@dataclass(frozen=True, slots=True)
class ArmSite:
    """Where one arm searches: its backend, the index (resolved), and its embedder."""

    backend: Backend
    index: str
    embedder: CachedEmbedder | None = None


class Clusters:
    """One backend per cluster the run names (the run's, and each arm's own), connected once."""

    def __init__(self, main: Backend, settings: ConnectionSettings) -> None:
        self.main, self.settings = main, settings
        self.open: dict[str, Backend] = {}

    def get(self, settings: ConnectionSettings | None) -> Backend:
        if settings is None or settings.url == self.settings.url:
            return self.main
        if settings.url not in self.open:
            self.open[settings.url] = connect(settings)
        return self.open[settings.url]

    def close(self) -> None:
        for backend in self.open.values():
            backend.close()


def embedder_for(
    model: str, exp: Experiment, query_prompt: str | None = None, document_prompt: str | None = None
) -> CachedEmbedder:
    """A cached embedder for ``model`` with the run's endpoint, embedding backend and remote-code consent."""
    return exp.embedding.embedder(model, query_prompt, document_prompt, exp.progress)


def embedders(exp: Experiment, arms: Sequence[Arm]) -> dict[str, CachedEmbedder]:
    """The embedder of every arm that embeds queries (one per model and prompt): the built-in arms' under
    :data:`BUILTIN`, each template arm's under its name."""
    out: dict[str, CachedEmbedder] = {}
    emb = exp.embedding
    if needs_vectors(arms):
        out[BUILTIN] = embedder_for(emb.model, exp, emb.query_prompt, emb.document_prompt)
    made: dict[tuple[str, str | None], CachedEmbedder] = {}
    for arm in arms:
        if isinstance(arm, TemplateArm) and arm.model is not None:
            key = (arm.model, arm.query_prompt)
            if key not in made:
                made[key] = embedder_for(arm.model, exp, arm.query_prompt)
            out[arm.name] = made[key]
    return out


@dataclass(slots=True)
class Sites:
    """Every arm's site on one dataset (by the arm's spec name), and the run's own index build."""

    by_arm: dict[str, ArmSite]
    summary: IndexSummary | None
    timings: dict[str, float]


def _check_arm(exp: Experiment, i: int, arm: TemplateArm, backend: Backend) -> None:
    """A template arm's cluster can run it: stored templates need search templates; its own index exists."""
    where = f"{exp.source}: arms[{i}]" if exp.source is not None else f"arms[{i}]"
    if arm.stored_template is not None and not backend.probe().has(SEARCH_TEMPLATE):
        why = backend.probe().missing.get(SEARCH_TEMPLATE, "the cluster has no search templates")
        raise CapabilityMissing(
            f"{where}.stored_template: {backend.url} cannot run stored search templates: {why}. Write the "
            "template in the experiment (template or template_file): the harness renders it"
        )
    if arm.index is not None and not backend.index_exists(arm.index):
        raise ConfigError(
            f"{where}.index: expected an index or alias {arm.index!r} on {backend.url}, found none (arm {arm.name})"
        )


def place_arms(
    exp: Experiment,
    dsplan: DatasetPlan,
    clusters: Clusters,
    embedded: Mapping[str, CachedEmbedder],
    caps: Capabilities,
    console: Console,
) -> Sites:
    """Every searched arm's site on ``dsplan``'s dataset, building its harness index where arms need it."""
    ds = dsplan.dataset
    specs = list({a.spec.name: a.spec for a in dsplan.search_arms}.values())
    needing: dict[str, list[CachedEmbedder]] = {}  # cluster url -> the embedders of the arms on its index
    for arm in specs:
        if isinstance(arm, TemplateArm) and arm.index is not None:
            continue
        backend = clusters.get(arm.connection if isinstance(arm, TemplateArm) else None)
        found = embedded.get(arm.name if isinstance(arm, TemplateArm) else BUILTIN)
        needing.setdefault(backend.url, []).extend([found] if found is not None else [])
    sites: dict[str, ArmSite] = {}
    for i, arm in enumerate(exp.arms):  # every arm checked before anything is built
        backend = clusters.get(arm.connection)
        _check_arm(exp, i, arm, backend)
        if arm.index is not None:
            sites[arm.name] = ArmSite(backend, arm.index, embedded.get(arm.name))
    built, timings = _build(exp, ds, clusters, needing, caps, console)
    for (
        arm
    ) in specs:  # a template arm searches the index's alias (its target names it), a built-in one the index
        if isinstance(arm, TemplateArm) and arm.name not in sites:
            backend = clusters.get(arm.connection)
            sites[arm.name] = ArmSite(backend, built[backend.url].alias, embedded.get(arm.name))
        elif not isinstance(arm, TemplateArm):
            sites[arm.name] = ArmSite(clusters.main, built[clusters.main.url].index, embedded.get(BUILTIN))
    return Sites(sites, built.get(clusters.main.url), timings)


def _build(
    exp: Experiment,
    ds: Dataset,
    clusters: Clusters,
    needing: Mapping[str, list[CachedEmbedder]],
    caps: Capabilities,
    console: Console,
) -> tuple[dict[str, IndexSummary], dict[str, float]]:
    """The dataset's harness index on each cluster in ``needing``, and the run cluster's build timings."""
    built: dict[str, IndexSummary] = {}
    timings: dict[str, float] = {}
    options = exp.index_options()
    for url, found in needing.items():
        backend = clusters.main if url == clusters.main.url else clusters.open[url]
        unique = list({e.spec.field_name: e for e in found}.values())
        t0 = time.perf_counter()
        done = build_index(
            backend, ds, unique, options, console=console, caps=caps if backend is clusters.main else None
        )
        built[url] = done
        if backend is clusters.main:
            timings = {
                "index_s": round(time.perf_counter() - t0, 3),
                "index_embed_s": round(done.embed_seconds, 3),
            }
    return built, timings
