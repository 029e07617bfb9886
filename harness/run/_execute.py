"""Execute a planned dataset: place its arms, search every engine arm, tune, fuse, rerank, score.

Each finished search arm is checkpointed (:mod:`._checkpoints`) as soon as its searches are done, so
re-running the same command never queries a finished arm again; the run directory's final files are
written only once every arm has its run. Held-out tuning is :mod:`harness.sweep`'s; what it needs from
the engine (another split's runs, each template setting's runs, the in-engine sum's folds) is searched
here (:class:`Searcher`), checkpointed the same way.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from rich.console import Console

from harness._search import ArmRun
from harness.eval import FusionSpec, fuse, rank, top_k
from harness.experiment import Experiment
from harness.rerank import Reranker
from harness.results import ArmTarget
from harness.run._arms import Group, QueryInputs, Weights, arm_target, groups, requests, search
from harness.run._checkpoints import Checkpoints, Folder, target_record
from harness.run._plan import DatasetPlan, PlannedArm, RunPlan
from harness.run._sites import Clusters, Sites, place_arms
from harness.strategies import FusedArm
from indexer import CachedEmbedder, Capabilities, Dataset, document_text


def corpus_texts(ds: Dataset, ids: set[str]) -> dict[str, str]:
    """The text a model sees (title and body) of the given documents, in one pass over the corpus."""
    return {d.id: document_text(d.title, d.text) for d in ds.iter_corpus() if d.id in ids}


def fuse_arm_runs(inputs: Mapping[str, ArmRun], spec: FusionSpec, depth: int) -> ArmRun:
    """The runs of ``inputs`` fused with ``spec`` (top ``depth``), with the fusion's cost added."""
    runs = {name: res.run for name, res in inputs.items()}
    qids = sorted({qid for run in runs.values() for qid in run})
    # untimed first call: numba compiles ranx's kernels per doc-id width, and JIT time is not query time
    fuse(runs, spec)
    t0 = time.perf_counter()
    fused = top_k(fuse(runs, spec), depth)
    per_query_ms = (time.perf_counter() - t0) * 1000.0 / max(1, len(fused))
    for qid in qids:
        fused.setdefault(qid, {})
    parts = list(inputs.values())
    return ArmRun(
        run=fused,
        took_ms={q: sum(p.took_ms.get(q, 0.0) for p in parts) for q in qids},
        client_ms={q: max(p.client_ms.get(q, 0.0) for p in parts) + per_query_ms for q in qids},
        wall_s=max(p.wall_s for p in parts) + per_query_ms * len(fused) / 1000.0,
        retries=sum(p.retries for p in parts),
    )


class Executor:
    """Runs the plan's datasets one at a time (arms on Elasticsearch, OpenSearch, or several clusters)."""

    def __init__(
        self,
        plan: RunPlan,
        clusters: Clusters,
        embedders: Mapping[str, CachedEmbedder],
        caps: Capabilities,
        console: Console,
        reranker: Reranker | None = None,
    ) -> None:
        self.plan, self.clusters, self.embedders, self.caps, self.console = (
            plan,
            clusters,
            embedders,
            caps,
            console,
        )
        self.exp: Experiment = plan.experiment
        self.reranker = reranker
        self.checkpoints = Checkpoints(plan.run_dir, plan.config_hash)

    def place(self, dsplan: DatasetPlan) -> Sites:
        return place_arms(self.exp, dsplan, self.clusters, self.embedders, self.caps, self.console)

    def search(
        self,
        ds: Dataset,
        arms: Sequence[PlannedArm],
        sites: Sites,
        folder: Folder,
        weights: Weights | None = None,
        targets: dict[str, ArmTarget] | None = None,
        extras: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, ArmRun]:
        """``arms`` searched on ``ds``: from their checkpoints in ``folder``, else searched and checkpointed
        (each record with ``extras[arm]``).

        With ``targets``, each template arm's target is read back or found before its searches."""
        runs: dict[str, ArmRun] = {}
        for arm in arms:
            record = folder.load(arm.name)
            if record is not None:
                runs[arm.name] = ArmRun.from_dict(record)
                if targets is not None and "target" in record:
                    targets[arm.name] = ArmTarget(**target_record(record["target"]))
        todo = [a for a in arms if a.name not in runs]
        if not todo:
            return runs
        inputs = QueryInputs(ds, sites.timings)
        found = groups(todo, sites.by_arm)
        rendered = [requests(g, self.exp, inputs, weights) for g in found]  # every body before any search
        if targets is not None:
            for g in found:
                if g.template is not None:
                    targets[g.arms[0].name] = arm_target(g.template, g.site, ds.qrels)
        for group, reqs in zip(found, rendered, strict=True):
            done = search(
                group, reqs, self.exp.search.options, self.console, self.exp.progress, self._what(ds, group)
            )
            for name, result in done.items():
                extra = dict((extras or {}).get(name, {}))
                target = targets.get(name) if targets is not None else None
                if target is not None:
                    extra["target"] = asdict(target)
                folder.save(name, result, **extra)
            runs.update(done)
        return runs

    @staticmethod
    def _what(ds: Dataset, group: Group) -> str:
        if group.template is not None:
            return f"searching {group.site.index} ({group.arms[0].name})"
        return f"searching {ds.name} ({', '.join(a.name for a in group.arms)})"

    def fuse(self, arm: PlannedArm, runs: Mapping[str, ArmRun]) -> ArmRun:
        assert isinstance(arm.spec, FusedArm)
        spec = arm.spec.fusion or self.exp.fusion
        return fuse_arm_runs({name: runs[name] for name in arm.inputs}, spec, self.exp.search.depth)

    def rerank(self, ds: Dataset, arm: PlannedArm, source: ArmRun, folder: Folder) -> ArmRun:
        """The top-k of ``source`` re-scored by the reranker, the rest kept below in their order."""
        found = folder.run(arm.name)
        if found is not None:
            return found
        spec = self.exp.rerank_spec
        assert self.reranker is not None and spec is not None
        ranked = {qid: list(top_k({qid: res}, spec.depth)[qid]) for qid, res in source.run.items()}
        t0 = time.perf_counter()
        texts = corpus_texts(ds, {d for docs in ranked.values() for d in docs})
        scores = self.reranker.score(ds.queries, ranked, texts)
        per_query_ms = (time.perf_counter() - t0) * 1000.0 / max(1, len(ranked))
        run: dict[str, dict[str, float]] = {}
        for qid, docs in source.run.items():
            head = dict(rank(scores.get(qid, {}), qid))
            floor = min(head.values(), default=0.0)
            tail = [d for d in top_k({qid: docs}, len(docs))[qid] if d not in head] if docs else []
            run[qid] = {**head, **{d: floor - 1.0 - i for i, d in enumerate(tail)}}
        result = replace(
            source,
            run=run,
            client_ms={q: ms + per_query_ms for q, ms in source.client_ms.items()},
            wall_s=source.wall_s + per_query_ms * len(ranked) / 1000.0,
        )
        folder.save(arm.name, result)
        return result
