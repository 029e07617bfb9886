"""Execute an experiment's dataset: every template arm on its own cluster and index, then the fused arms.

Everything that can fail without the engine fails first: every body of every arm is rendered
(an unknown variable, a body that is not JSON) and every arm's index is checked before the
first search is sent. Each arm's run is checkpointed as soon as it is searched (``._resume``); the run
directory's final files are written only once every arm has its run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rich.console import Console

from harness._errors import RunError
from harness._search import ArmRun, Request, run_searches
from harness.eval import Evaluation, evaluate
from harness.experiment._config import ExperimentConfig
from harness.experiment._resume import ArmCheckpoints
from harness.results import ArmTarget
from harness.run import fuse_arm_runs
from harness.strategies import ID_FIELD, QueryInput, SearchContext, TemplateArm, TemplateStrategy
from indexer import Backend, CachedEmbedder, ConfigError, Dataset, RequestFailed, progress

#: judged document ids asked of the engine per request (the ids query / terms query)
ID_BATCH = 500


@dataclass(slots=True)
class ArmSite:
    """Where one template arm searches: its backend, the index (resolved), and its embedder."""

    backend: Backend
    index: str
    embedder: CachedEmbedder | None = None


@dataclass(slots=True)
class ExperimentOutcome:
    """Every arm's run and scores on one dataset, and what each arm's index lacks."""

    dataset: Dataset
    runs: dict[str, ArmRun] = field(default_factory=dict)
    evaluations: dict[str, Evaluation] = field(default_factory=dict)
    targets: dict[str, ArmTarget] = field(default_factory=dict)


def _inputs(ds: Dataset, embedder: CachedEmbedder | None) -> list[QueryInput]:
    qids = sorted(ds.queries)
    texts = [ds.queries[q] for q in qids]
    if embedder is None:
        return [QueryInput(q, t) for q, t in zip(qids, texts, strict=True)]
    vectors = embedder.embed_queries(texts)
    return [
        QueryInput(q, t, tuple(float(x) for x in row)) for q, t, row in zip(qids, texts, vectors, strict=True)
    ]


def render_requests(arm: TemplateArm, site: ArmSite, ds: Dataset, ctx: SearchContext) -> list[Request]:
    """Every body of ``arm`` for ``ds`` (rendered before anything is sent: errors name the query)."""
    vector_field = site.embedder.spec.field_name if site.embedder is not None else None
    strategy = TemplateStrategy(
        SearchContext(ctx.depth, num_candidates=ctx.num_candidates, vector_field=vector_field),
        arm,
        site.backend.product,
    )
    return [(arm.name, q.qid, strategy.body(q)) for q in _inputs(ds, site.embedder)]


def search_arm(
    arm: TemplateArm, site: ArmSite, requests: Sequence[Request], exp: ExperimentConfig, console: Console
) -> ArmRun:
    what = f"searching {site.index} ({arm.name})"
    stored = arm.stored_template is not None
    with progress(what, len(requests), unit="searches", console=console, enabled=exp.run.progress) as bar:
        try:
            done = run_searches(
                site.backend,
                site.index,
                requests,
                exp.run.search,
                on_done=bar.advance,
                id_field=arm.id_field,
                stored_templates=stored,
            )
        except (RunError, ConfigError) as exc:
            why = str(exc) if stored else _first_failure(site, requests, exc)
            where = arm.source if stored else f"template {arm.source}"
            raise type(exc)(f"arm {arm.name} ({where}): {why}") from None
    return done[arm.name]


def _first_failure(site: ArmSite, requests: Sequence[Request], exc: Exception, tries: int = 20) -> str:
    """What failed: a whole msearch refused (a body the engine cannot parse fails every search of the
    request) is narrowed to the first query, in id order, whose search alone the engine refuses."""
    if not isinstance(exc, RunError) or not str(exc).startswith("msearch on"):
        return str(exc)
    for _, qid, body in requests[:tries]:
        try:
            site.backend.search(site.index, body)
        except RequestFailed as failed:
            return f"the search for query {qid} on {site.index} failed (HTTP {failed.status}): {failed}"
    return str(exc)


def missing_judged(backend: Backend, index: str, id_field: str, ids: Sequence[str]) -> list[str]:
    """The judged documents ``index`` does not hold, matched by ``id_field`` (``_id``: the engine's id)."""
    held: set[str] = set()
    for start in range(0, len(ids), ID_BATCH):
        batch = list(ids[start : start + ID_BATCH])
        if id_field == ID_FIELD:
            query: dict[str, object] = {"ids": {"values": batch}}
        else:
            query = {"terms": {id_field: batch}}
        # several documents may share an id field value (passages of one document): room for 20 each
        size = len(batch) if id_field == ID_FIELD else min(10_000, 20 * len(batch))
        body = {"size": size, "query": query, "_source": [id_field] if id_field != ID_FIELD else False}
        found = backend.search(index, body)
        held.update(found.ranking_by(id_field))
    return sorted(set(ids) - held)


def arm_target(arm: TemplateArm, site: ArmSite, qrels: Mapping[str, Mapping[str, int]]) -> ArmTarget:
    judged = sorted({d for docs in qrels.values() for d in docs})
    relevant = {d for docs in qrels.values() for d, g in docs.items() if g > 0}
    missing = missing_judged(site.backend, site.index, arm.id_field, judged)
    return ArmTarget(
        index=site.index,
        url=site.backend.url,
        template=arm.source,
        id_field=arm.id_field,
        judged=len(judged),
        missing_judged=tuple(missing),
        missing_relevant=sum(d in relevant for d in missing),
    )


def render_all(
    exp: ExperimentConfig, arms: Sequence[TemplateArm], ds: Dataset, sites: Mapping[str, ArmSite]
) -> dict[str, list[Request]]:
    """Every body of every arm of ``arms`` for ``ds``, rendered before any is sent."""
    ctx = SearchContext(depth=exp.run.depth, num_candidates=exp.run.num_candidates)
    return {arm.name: render_requests(arm, sites[arm.name], ds, ctx) for arm in arms}


def execute(
    exp: ExperimentConfig,
    ds: Dataset,
    sites: Mapping[str, ArmSite],
    console: Console,
    report: Callable[[str], None] | None = None,
    checkpoints: ArmCheckpoints | None = None,
) -> ExperimentOutcome:
    """Render, check, search and fuse every arm of ``exp`` on ``ds``; score each against its qrels.

    With ``checkpoints``, an arm finished by an earlier run of the same experiment is read back (no
    search), and each arm searched now is checkpointed as soon as its searches are done."""
    outcome = ExperimentOutcome(ds)
    for arm in exp.arms:
        found = checkpoints.get(arm.name) if checkpoints is not None else None
        if found is not None:
            outcome.runs[arm.name], outcome.targets[arm.name] = found
    todo = [arm for arm in exp.arms if arm.name not in outcome.runs]
    requests = render_all(exp, todo, ds, sites)
    for arm in todo:
        outcome.targets[arm.name] = arm_target(arm, sites[arm.name], ds.qrels)
    for arm in todo:
        outcome.runs[arm.name] = search_arm(arm, sites[arm.name], requests[arm.name], exp, console)
        if checkpoints is not None:
            checkpoints.put(arm.name, outcome.runs[arm.name], outcome.targets[arm.name])
    outcome.runs = {arm.name: outcome.runs[arm.name] for arm in exp.arms}  # in the experiment's order
    for fused in exp.fused:
        assert fused.fusion is not None
        outcome.runs[fused.name] = fuse_arm_runs(
            {name: outcome.runs[name] for name in fused.inputs}, fused.fusion, exp.run.depth
        )
        outcome.targets[fused.name] = ArmTarget(fusion=str(fused.fusion), inputs=fused.inputs)
    for name, result in outcome.runs.items():
        outcome.evaluations[name] = evaluate(ds.qrels, result.run, exp.run.measures)
        target = outcome.targets[name]
        if report is not None and target.missing_judged:
            report(
                f"{ds.name}/{name}: {len(target.missing_judged)} of {target.judged} judged documents "
                f"({target.missing_relevant} relevant) are not in {target.index}; they still count in the ideal ranking"
            )
    return outcome
