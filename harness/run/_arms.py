"""How the engine arms of one dataset split search: every body rendered first, then one msearch pass per group.

The built-in arms form one group (the searches of all arms of a query travel in the same msearch request);
each template arm is a group of its own (its site, its id field, its stored template). Every body of
every group is rendered before the first search is sent, so an unknown variable or a body that is not
JSON fails before any work; a whole msearch refused is narrowed to the first query whose search alone
the engine refuses. A template arm also asks, before it searches, which judged documents its index lacks
(its target: they still count in the ideal ranking).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from rich.console import Console

from base import ConfigError, RequestFailed, progress
from harness._errors import RunError
from harness._search import ArmRun, Request, SearchOptions, run_searches
from harness.expand import Expansion, combine_dense
from harness.experiment import Experiment
from harness.results import ArmTarget
from harness.run._plan import PlannedArm
from harness.run._sites import ArmSite
from harness.strategies import (
    ID_FIELD,
    QueryInput,
    RetrievalStrategy,
    SearchArm,
    SearchContext,
    TemplateArm,
    TemplateStrategy,
    TextFields,
)
from indexer import CachedEmbedder, Dataset

#: judged document ids asked of the engine per request (the ids query / terms query)
ID_BATCH = 500
Weights = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Group:
    """Arms searched in one msearch pass: on one site; a template arm alone."""

    site: ArmSite
    arms: tuple[PlannedArm, ...]

    @property
    def template(self) -> TemplateArm | None:
        spec = self.arms[0].spec
        return spec if isinstance(spec, TemplateArm) else None


def groups(arms: Sequence[PlannedArm], sites: Mapping[str, ArmSite]) -> list[Group]:
    builtin = tuple(a for a in arms if isinstance(a.spec, SearchArm))
    out = [Group(sites[builtin[0].spec.name], builtin)] if builtin else []
    return out + [Group(sites[a.spec.name], (a,)) for a in arms if isinstance(a.spec, TemplateArm)]


def _encode_parts(embedder: CachedEmbedder, parts: list[tuple[str, bool]]) -> np.ndarray:
    """Each text's vector, in order: with the query prompt where its flag says so, else with none."""
    prompted = [i for i, (_, p) in enumerate(parts) if p]
    if len(prompted) == len(parts):
        return embedder.embed_queries([t for t, _ in parts])
    plain = [i for i, (_, p) in enumerate(parts) if not p]
    first = embedder.embed_queries([parts[i][0] for i in prompted])
    out = np.zeros((len(parts), first.shape[1]), dtype=first.dtype)
    out[prompted] = first
    out[plain] = embedder.embed_queries([parts[i][0] for i in plain], prompt="")
    return out


class QueryInputs:
    """Each query's (expanded) text and vector, per expansion and embedder, computed once."""

    def __init__(self, ds: Dataset, timings: dict[str, float]) -> None:
        self.ds, self.timings = ds, timings
        self.made: dict[tuple[str, int], list[QueryInput]] = {}

    def of(self, expansion: Expansion | None, embedder: CachedEmbedder | None) -> list[QueryInput]:
        key = (expansion.label if expansion else "", id(embedder))
        if key not in self.made:
            self.made[key] = self._make(expansion, embedder)
        return self.made[key]

    def _make(self, expansion: Expansion | None, embedder: CachedEmbedder | None) -> list[QueryInput]:
        ds = self.ds
        qids = sorted(ds.queries)
        texts = [ds.queries[q] for q in qids]
        lexical = [expansion.lexical_text(q, ds.queries[q]) for q in qids] if expansion is not None else texts
        for qid, text in zip(qids, lexical, strict=True):
            if not text.strip():
                raise RunError(f"query {qid} of {ds.name} is empty: expected text to search for")
        vectors: list[tuple[float, ...] | None] = [None] * len(qids)
        if embedder is not None:
            t0 = time.perf_counter()
            if expansion is None:
                mat = embedder.embed_queries(texts)
            else:
                found = [expansion.dense_parts(q, ds.queries[q]) for q in qids]
                mat = combine_dense(
                    _encode_parts(embedder, [p for g in found for p in g]), [len(g) for g in found]
                )
            self.timings["query_embed_s"] = round(
                self.timings.get("query_embed_s", 0.0) + time.perf_counter() - t0, 3
            )
            vectors = [tuple(float(x) for x in row) for row in mat]
        return [QueryInput(q, t, v) for q, t, v in zip(qids, lexical, vectors, strict=True)]


def context(exp: Experiment, site: ArmSite, weights: Weights | None = None) -> SearchContext:
    """The search context of the arms of ``site``: the text fields and vector field they search (ours,
    or those of the user's mapping), depth, candidates, the engine's dialect."""
    user = exp.user_mapping
    model_field = site.embedder.spec.field_name if site.embedder else None
    fields, vector_field = TextFields(), model_field
    if user is not None:
        fields = TextFields(user.field_map.text, user.field_map.title, combined=None)
        vector_field = user.vector_field(model_field) if model_field else None
    return SearchContext(
        depth=exp.search.depth,
        bm25=exp.index.bm25,
        lexical_field=exp.index.lexical_field,
        text_fields=fields,
        vector_field=vector_field,
        num_candidates=exp.search.num_candidates,
        hybrid_technique=exp.search.hybrid_technique,
        dialect=site.backend,
        sum_weights=weights,
    )


def bodies(
    arm: PlannedArm,
    ctx: SearchContext,
    site: ArmSite,
    inputs: Sequence[QueryInput],
    pipeline: str | None = None,
) -> list[dict]:
    """``arm``'s search body for each query (through the search pipeline it names, if any)."""
    strategy: RetrievalStrategy
    if isinstance(arm.spec, TemplateArm):
        own = SearchContext(ctx.depth, num_candidates=ctx.num_candidates, vector_field=ctx.vector_field)
        strategy = TemplateStrategy(own, arm.spec, site.backend.product)
    else:
        assert isinstance(arm.spec, SearchArm)
        strategy = arm.spec.strategy(ctx)
    return with_pipeline([strategy.body(q) for q in inputs], site, pipeline)


def with_pipeline(made: list[dict], site: ArmSite, name: str | None) -> list[dict]:
    """The bodies through the named search pipeline (its definition sent with each: msearch takes no pipeline
    name); with none named, a body's own inline pipeline (the hybrid query's) gives way to the index's default."""
    if name is not None:
        definition = site.backend.search_pipeline(name)
        return [{**body, "search_pipeline": definition} for body in made]
    if any("search_pipeline" in b for b in made) and site.backend.default_search_pipeline(site.index):
        return [{k: v for k, v in body.items() if k != "search_pipeline"} for body in made]
    return made


def pipeline_of(arm: PlannedArm, exp: Experiment) -> str | None:
    """The search pipeline ``arm`` names: a template arm's own, a built-in arm's in ``search.pipelines``."""
    if isinstance(arm.spec, TemplateArm):
        return arm.spec.search_pipeline
    return exp.search.pipeline_of.get(arm.spec.name)


def requests(group: Group, exp: Experiment, inputs: QueryInputs, weights: Weights | None) -> list[Request]:
    """Every search of ``group``: the arms of a query side by side (interleaved), in query order."""
    ctx = context(exp, group.site, weights if group.template is None else None)
    site = group.site
    per_arm = {
        a.name: bodies(a, ctx, site, inputs.of(a.expansion, site.embedder), pipeline_of(a, exp))
        for a in group.arms
    }
    qids = [q.qid for q in inputs.of(None, None)]
    return [(a.name, qid, per_arm[a.name][i]) for i, qid in enumerate(qids) for a in group.arms]


def search(
    group: Group, reqs: Sequence[Request], options: SearchOptions, console: Console, shown: bool, what: str
) -> dict[str, ArmRun]:
    """The searches of ``group``; a template arm's failure names the arm and its template."""
    arm = group.template
    with progress(what, len(reqs), unit="searches", console=console, enabled=shown) as bar:
        if arm is None:
            return run_searches(group.site.backend, group.site.index, reqs, options, on_done=bar.advance)
        stored = arm.stored_template is not None
        try:
            return run_searches(
                group.site.backend,
                group.site.index,
                reqs,
                options,
                on_done=bar.advance,
                id_field=arm.id_field,
                stored_templates=stored,
            )
        except (RunError, ConfigError) as exc:
            why = str(exc) if stored else _first_failure(group.site, reqs, exc)
            where = arm.source if stored else f"template {arm.source}"
            raise type(exc)(f"arm {arm.name} ({where}): {why}") from None


def _first_failure(site: ArmSite, reqs: Sequence[Request], exc: Exception, tries: int = 20) -> str:
    """What failed: a whole msearch refused (a body the engine cannot parse fails every search of the
    request) is narrowed to the first query, in id order, whose search alone the engine refuses."""
    if not isinstance(exc, RunError) or not str(exc).startswith("msearch on"):
        return str(exc)
    for _, qid, body in reqs[:tries]:
        try:
            site.backend.search(site.index, body)
        except RequestFailed as failed:
            return f"the search for query {qid} on {site.index} failed (HTTP {failed.status}): {failed}"
    return str(exc)


def missing_judged(site: ArmSite, id_field: str, ids: Sequence[str]) -> list[str]:
    """The judged documents ``site``'s index does not hold, matched by ``id_field`` (``_id``: the engine's id)."""
    held: set[str] = set()
    for start in range(0, len(ids), ID_BATCH):
        batch = list(ids[start : start + ID_BATCH])
        query: dict[str, object] = (
            {"ids": {"values": batch}} if id_field == ID_FIELD else {"terms": {id_field: batch}}
        )
        # several documents may share an id field value (passages of one document): room for 20 each
        size = len(batch) if id_field == ID_FIELD else min(10_000, 20 * len(batch))
        body = {"size": size, "query": query, "_source": [id_field] if id_field != ID_FIELD else False}
        held.update(site.backend.search(site.index, body).ranking_by(id_field))
    return sorted(set(ids) - held)


def arm_target(arm: TemplateArm, site: ArmSite, qrels: Mapping[str, Mapping[str, int]]) -> ArmTarget:
    judged = sorted({d for docs in qrels.values() for d in docs})
    relevant = {d for docs in qrels.values() for d, g in docs.items() if g > 0}
    missing = missing_judged(site, arm.id_field, judged)
    return ArmTarget(
        index=site.index,
        url=site.backend.url,
        template=arm.source,
        id_field=arm.id_field,
        judged=len(judged),
        missing_judged=tuple(missing),
        missing_relevant=sum(d in relevant for d in missing),
    )
