"""Execute a planned dataset: index it, embed its queries, search every engine arm, fuse, score.

Each finished search arm is checkpointed under ``RUN_DIR/arms/<dataset>/<split>/<arm>.json``
before anything else happens, so re-running the same command never queries a finished
arm again. The searches of all arms of a query travel in the same msearch request.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from harness._errors import RunError
from harness._search import ArmRun, Request, run_searches
from harness.eval import (
    PRIMARY_MEASURE,
    Evaluation,
    FusionSpec,
    evaluate,
    fuse,
    top_k,
    tune_sum_weights,
)
from harness.expand import Expansion, combine_dense
from harness.rerank import Reranker
from harness.run._plan import DatasetPlan, PlannedArm, RunPlan
from harness.run._sum_kfold import kfold_sum_runs
from harness.run._sweep import (
    SweepOutcome,
    configurations,
    held_out_runs,
    kfold_selection,
    primary_fused,
    score_matrix,
)
from harness.strategies import FusedArm, QueryInput, RerankedArm, SearchArm, SearchContext, TextFields
from harness.sweep import SweepContext, select
from indexer import (
    BM25_PARAMS,
    Backend,
    CachedEmbedder,
    Capabilities,
    ConfigError,
    Dataset,
    IndexOptions,
    IndexSummary,
    build_index,
    document_text,
    progress,
    read_json,
    slug,
    write_json_atomic,
)

if TYPE_CHECKING:
    from harness.run._perf import DatasetPerformance

Clock = Callable[[], float]


@dataclass(slots=True)
class DatasetOutcome:
    """What executing one dataset produced: the index, every arm's run and scores, and timings."""

    plan: DatasetPlan
    index: str
    runs: dict[str, ArmRun]
    evaluations: dict[str, Evaluation]
    fusion: FusionSpec | None
    timings: dict[str, float]
    index_summary: IndexSummary | None
    performance: DatasetPerformance | None = None  # the load phase, ANN recall and sweep (harness.run._perf)
    sum_weights: tuple[float, float] | None = None  # of the in-engine weighted sum, when it ran
    sweep: SweepOutcome | None = None  # what --tune-on chose for the fused arms (harness.run._sweep)
    sum_fold_weights: tuple[tuple[float, float], ...] = ()  # kfold: the in-engine sum's weights per fold

    @property
    def dataset(self) -> Dataset:
        return self.plan.dataset


def corpus_texts(ds: Dataset, ids: set[str]) -> dict[str, str]:
    """The text a model sees (title and body) of the given documents, in one pass over the corpus."""
    return {d.id: document_text(d.title, d.text) for d in ds.iter_corpus() if d.id in ids}


def fuse_arm_runs(inputs: dict[str, ArmRun], spec: FusionSpec, depth: int) -> ArmRun:
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


class Checkpoints:
    """Finished arms of one dataset split, one JSON file each (written atomically)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get(self, arm: str) -> ArmRun | None:
        path = self.folder / f"{arm}.json"
        return ArmRun.from_dict(read_json(path)) if path.is_file() else None

    def put(self, arm: str, result: ArmRun) -> None:
        write_json_atomic(self.folder / f"{arm}.json", result.to_dict())


class Executor:
    """Runs the plan's datasets one at a time against ``backend`` (Elasticsearch or OpenSearch)."""

    def __init__(
        self,
        backend: Backend,
        plan: RunPlan,
        embedder: CachedEmbedder | None,
        caps: Capabilities,
        console: Console,
        reranker: Reranker | None = None,
    ) -> None:
        self.backend, self.plan, self.embedder, self.caps, self.console = (
            backend,
            plan,
            embedder,
            caps,
            console,
        )
        self.config = plan.config
        self.reranker = reranker

    def run_dataset(self, dsplan: DatasetPlan) -> DatasetOutcome:
        ds = dsplan.dataset
        timings: dict[str, float] = {}
        summary = self._index(ds, timings)
        ckpt = self.plan.run_dir / "arms" / slug(ds.name)
        tuning = self.config.tuning
        kfold_sum = bool(dsplan.weighted_arms) and tuning is not None and tuning.is_kfold
        weights = (
            self._sum_weights(dsplan, summary.index, ckpt) if dsplan.weighted_arms and not kfold_sum else None
        )
        deferred = {a.name for a in dsplan.weighted_arms} if kfold_sum else set()
        split_dir = ckpt / (ds.split or "default")
        arms = [a for a in dsplan.search_arms if a.name not in deferred]
        runs = self._search(ds, summary.index, arms, Checkpoints(split_dir), timings, weights)
        fold_weights: tuple[tuple[float, float], ...] = ()
        if kfold_sum:  # each fold searched with weights fitted on the others (harness.run._sum_kfold)
            found, fold_weights = kfold_sum_runs(self, dsplan, summary.index, runs, split_dir)
            runs.update(found)
        fusion, sweep = None, None
        if dsplan.fused_arms and self.config.tune_on:
            sweep = self._sweep(dsplan, runs, summary.index, ckpt)
            fusion = sweep.fusion
            runs.update(sweep.runs)
        elif dsplan.fused_arms:
            fusion = self.config.fusion_spec
            for arm in dsplan.fused_arms:
                assert isinstance(arm.spec, FusedArm)
                spec = arm.spec.fusion or fusion
                runs[arm.name] = self._fuse({name: runs[name] for name in arm.inputs}, spec)
        for arm in dsplan.reranked_arms:
            assert isinstance(arm.spec, RerankedArm)
            runs[arm.name] = self._rerank(
                ds, arm.name, runs[arm.spec.input], Checkpoints(ckpt / (ds.split or "default"))
            )
        ordered = {arm.name: runs[arm.name] for arm in dsplan.arms}
        evaluations = {
            name: evaluate(ds.qrels, res.run, self.config.measures) for name, res in ordered.items()
        }
        return DatasetOutcome(
            dsplan,
            summary.index,
            ordered,
            evaluations,
            fusion,
            timings,
            summary,
            sum_weights=weights,
            sweep=sweep,
            sum_fold_weights=fold_weights,
        )

    # ------------------------------------------------------------------ index
    def _index(self, ds: Dataset, timings: dict[str, float]) -> IndexSummary:
        t0 = time.perf_counter()
        embedders = [self.embedder] if self.embedder is not None else []
        options = IndexOptions(
            progress=self.config.progress, analysis=self.config.analysis, mapping=self.config.user_mapping
        )
        summary = build_index(self.backend, ds, embedders, options, console=self.console, caps=self.caps)
        timings["index_s"] = round(time.perf_counter() - t0, 3)
        timings["index_embed_s"] = round(summary.embed_seconds, 3)
        return summary

    # ----------------------------------------------------------------- search
    def _fields(self) -> tuple[TextFields, str | None]:
        """The text fields and the vector field the arms search: ours, or those of the user's mapping."""
        user = self.config.user_mapping
        model_field = self.embedder.spec.field_name if self.embedder else None
        if user is None:
            return TextFields(), model_field
        fields = TextFields(user.field_map.text, user.field_map.title, combined=None)
        return fields, user.vector_field(model_field) if model_field else None

    def _context(self, weights: tuple[float, float] | None = None) -> SearchContext:
        cfg = self.config
        text_fields, vector_field = self._fields()
        return SearchContext(
            depth=cfg.depth,
            bm25=cfg.bm25,
            lexical_field=cfg.lexical_field,
            text_fields=text_fields,
            vector_field=vector_field,
            num_candidates=cfg.num_candidates,
            dialect=self.backend,
            sum_weights=weights,
        )

    def _query_inputs(
        self, ds: Dataset, expansion: Expansion | None, timings: dict[str, float]
    ) -> list[QueryInput]:
        qids = sorted(ds.queries)
        texts = [ds.queries[q] for q in qids]
        lexical = [expansion.lexical_text(q, ds.queries[q]) for q in qids] if expansion is not None else texts
        for qid, text in zip(qids, lexical, strict=True):
            if not text.strip():
                raise RunError(f"query {qid} of {ds.name} is empty: expected text to search for")
        vectors: list[tuple[float, ...] | None] = [None] * len(qids)
        if self.embedder is not None:
            t0 = time.perf_counter()
            if expansion is None:
                mat = self.embedder.embed_queries(texts)
            else:
                groups = [expansion.dense_texts(q, ds.queries[q]) for q in qids]
                mat = combine_dense(
                    self.embedder.embed_queries([t for g in groups for t in g]), [len(g) for g in groups]
                )
            timings["query_embed_s"] = round(timings.get("query_embed_s", 0.0) + time.perf_counter() - t0, 3)
            vectors = [tuple(float(x) for x in row) for row in mat]
        return [QueryInput(q, t, v) for q, t, v in zip(qids, lexical, vectors, strict=True)]

    def _search(
        self,
        ds: Dataset,
        index: str,
        arms: Sequence[PlannedArm],
        ckpt: Checkpoints,
        timings: dict[str, float],
        weights: tuple[float, float] | None = None,
    ) -> dict[str, ArmRun]:
        runs = {arm.name: found for arm in arms if (found := ckpt.get(arm.name)) is not None}
        todo = [arm for arm in arms if arm.name not in runs]
        if not todo:
            return runs
        expansions = {arm.expansion.label if arm.expansion else "": arm.expansion for arm in todo}
        inputs = {label: self._query_inputs(ds, exp, timings) for label, exp in expansions.items()}
        ctx = self._context(weights)
        strategies = {}
        for arm in todo:
            assert isinstance(arm.spec, SearchArm)
            strategies[arm.name] = arm.spec.strategy(ctx)
        requests: list[Request] = []
        for i in range(len(ds.queries)):  # interleaved: the arms of a query travel in the same msearch
            for arm in todo:
                q = inputs[arm.expansion.label if arm.expansion else ""][i]
                requests.append((arm.name, q.qid, strategies[arm.name].body(q)))
        what = f"searching {ds.name} ({', '.join(strategies)})"
        with progress(
            what, len(requests), unit="searches", console=self.console, enabled=self.config.progress
        ) as bar:
            done = run_searches(self.backend, index, requests, self.config.search, on_done=bar.advance)
        for name, result in done.items():
            ckpt.put(name, result)
        runs.update(done)
        return runs

    def search_checkpointed(
        self, ds: Dataset, index: str, arms: Sequence[PlannedArm], folder: Path, weights: tuple[float, float]
    ) -> dict[str, ArmRun]:
        """``arms`` searched on ``ds`` with the sum's ``weights``, checkpointed in ``folder``."""
        return self._search(ds, index, arms, Checkpoints(folder), {}, weights)

    # ------------------------------------------------------------------- fuse
    def _fuse(self, inputs: dict[str, ArmRun], spec: FusionSpec) -> ArmRun:
        return fuse_arm_runs(inputs, spec, self.config.depth)

    # ----------------------------------------------------------------- rerank
    def _rerank(self, ds: Dataset, name: str, source: ArmRun, ckpt: Checkpoints) -> ArmRun:
        """The top-k of ``source`` re-scored by the reranker, the rest kept below in their order."""
        found = ckpt.get(name)
        if found is not None:
            return found
        assert self.reranker is not None and self.config.rerank_spec is not None
        depth = self.config.rerank_spec.depth
        ranked = {qid: list(top_k({qid: res}, depth)[qid]) for qid, res in source.run.items()}
        t0 = time.perf_counter()
        texts = corpus_texts(ds, {d for docs in ranked.values() for d in docs})
        scores = self.reranker.score(ds.queries, ranked, texts)
        per_query_ms = (time.perf_counter() - t0) * 1000.0 / max(1, len(ranked))
        run: dict[str, dict[str, float]] = {}
        for qid, docs in source.run.items():
            head = dict(sorted(scores.get(qid, {}).items(), key=lambda item: (-item[1], item[0])))
            floor = min(head.values(), default=0.0)
            tail = [d for d in top_k({qid: docs}, len(docs))[qid] if d not in head] if docs else []
            run[qid] = {**head, **{d: floor - 1.0 - i for i, d in enumerate(tail)}}
        result = ArmRun(
            run=run,
            took_ms=dict(source.took_ms),
            client_ms={q: ms + per_query_ms for q, ms in source.client_ms.items()},
            wall_s=source.wall_s + per_query_ms * len(ranked) / 1000.0,
            retries=source.retries,
        )
        ckpt.put(name, result)
        return result

    def _train_runs(self, dsplan: DatasetPlan, index: str, ckpt: Path) -> tuple[Dataset, dict[str, ArmRun]]:
        """The ``--tune-on`` split and the runs of the hybrid's inputs on it (checkpointed, searched once)."""
        ds, tuning = dsplan.dataset, self.config.tuning
        assert tuning is not None and tuning.split is not None
        split = tuning.split
        if split == (ds.split or "test"):
            raise ConfigError(f"--tune-on {split} is the evaluation split: tuning must never see it")
        if split not in ds.splits:
            raise ConfigError(
                f"dataset {ds.name} has no {split!r} split to tune on (splits: {', '.join(ds.splits) or 'none'})"
            )
        train = ds.with_split(split)
        fused = next(a for a in dsplan.fused_arms if a.expansion is None)
        inputs = [a for a in dsplan.search_arms if a.name in fused.inputs]
        return train, self._search(train, index, inputs, Checkpoints(ckpt / f"tune-{split}"), {})

    def _sum_weights(self, dsplan: DatasetPlan, index: str, ckpt: Path) -> tuple[float, float]:
        """The in-engine sum's weights: --fusion's, or with ``--tune-on SPLIT`` fitted on that split's runs
        (k-fold fits them per fold: harness.run._sum_kfold)."""
        cfg = self.config
        if cfg.tuning is None:
            return cfg.sum_weights
        train, runs = self._train_runs(dsplan, index, ckpt)
        fused = next(a for a in dsplan.fused_arms if a.expansion is None)
        lexical, vector = (runs[name].run for name in fused.inputs)
        k1 = BM25_PARAMS[cfg.bm25][0]
        weights = tune_sum_weights(
            train.qrels,
            lexical,
            vector,
            lexical_scale=self.backend.bm25_scale(k1),
            metric=PRIMARY_MEASURE.key,
        )
        self.console.print(
            f"in-engine sum weights tuned on {train.name}/{cfg.tune_on} ({len(train.queries)} queries): "
            f"lexical {weights[0]:g}, vector {weights[1]:g} (BM25 in Elasticsearch units)",
            highlight=False,
        )
        return weights

    def _sweep(self, dsplan: DatasetPlan, runs: dict[str, ArmRun], index: str, ckpt: Path) -> SweepOutcome:
        """The fused arms chosen by ``--tune-on`` from the sweep grid, every query scored held out."""
        cfg, ds = self.config, dsplan.dataset
        tuning = cfg.tuning
        assert tuning is not None
        fused = primary_fused(dsplan)
        ctx = SweepContext(fused.inputs, fused.name, cfg.depth)
        configs = {c.label: c for c in configurations(cfg, ctx)}
        inputs = {name: runs[name].run for name in fused.inputs}
        score = score_matrix(list(configs.values()), ctx, inputs, ds, self.console, cfg.progress)
        if tuning.folds is not None:
            selection = kfold_selection(score, tuning.folds, cfg.seed)
        else:
            train, train_runs = self._train_runs(dsplan, index, ckpt)
            train_inputs = {name: train_runs[name].run for name in fused.inputs}
            choose = score_matrix(
                list(configs.values()), ctx, train_inputs, train, self.console, cfg.progress
            )
            selection = select(choose, score, [(sorted(train.queries), sorted(next(iter(score.values()))))])
        held = held_out_runs(runs, dsplan.fused_arms, selection, configs, cfg.depth)
        self.console.print(
            f"sweep of {fused.name} on {ds.name} ({tuning}): held-out {PRIMARY_MEASURE.key} "
            f"{selection.held_out:.4f}; in-sample best {selection.in_sample_score:.4f} "
            f"({selection.in_sample_best}, optimistic); chosen: "
            + "; ".join(
                f"fold {f.fold + 1} {f.chosen}" if tuning.is_kfold else f"on {tuning.split} {f.chosen}"
                for f in selection.folds
            ),
            highlight=False,
        )
        return SweepOutcome(fused.name, tuning, cfg.sweep_spec, selection, configs, held)
