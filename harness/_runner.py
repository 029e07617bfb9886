"""`harness run`: index when needed, query every arm, fuse, score, test, report.

For each dataset the runner ensures the index (through the indexer), embeds
the queries (cached), sends every engine arm in batched msearch requests (in
hybrid mode the lexical and vector searches of the same queries travel in the
same msearch), fuses client-side with ranx, scores with ranx, and writes the
run directory. Each finished arm is checkpointed, so re-running the same
command resumes and never queries a finished arm again.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness._expansion import Expansion, combine_dense, select_expansion
from harness._output import read_json, write_json, write_jsonl, write_trec
from harness._paper import reference_rows
from harness._search import ArmResult, Request, SearchOptions, run_searches
from harness.eval import (
    DEFAULT_MEASURES,
    PRIMARY_MEASURE,
    Evaluation,
    FusionSpec,
    bootstrap_ci,
    compare_arms,
    evaluate,
    fuse,
    optimize_fusion,
    top_k,
)
from harness.inspect import build_records, render_markdown
from harness.sinks import EsSink, JsonlSink
from harness.strategies import STRATEGIES, QueryInput, SearchContext
from indexer import Capabilities, ConfigError, ConnectionSettings, DataError, RunError, __version__, probe
from indexer._build import IndexOptions, IndexSummary, build_index
from indexer._layout import slug
from indexer.data import Dataset, load_dataset, resolve_specs
from indexer.embed import CachedEmbedder

#: the engine arms each mode needs, by strategy kind (client-side ``hybrid`` is fused from two of them)
MODES: dict[str, tuple[str, ...]] = {
    "lexical": ("lexical",),
    "vector": ("vector",),
    "hybrid": ("lexical", "vector"),
}
#: in-engine hybrid strategies tried in hybrid mode when the engine offers the retriever
ENGINE_HYBRID: dict[str, str] = {"engine-rrf": "hybrid-engine-rrf", "engine-linear": "hybrid-engine-linear"}
MAX_DEPTH = 1000


@dataclass(frozen=True, slots=True)
class RunConfig:
    mode: str
    datasets: tuple[str, ...] = ("r2med",)
    split: str | None = None
    fusion: FusionSpec = field(default_factory=FusionSpec)
    tune_on: str | None = None
    expansion: str | None = None
    depth: int = 100
    num_candidates: int | None = None
    bm25: str = "es"
    lexical_field: str = "combined"
    search: SearchOptions = field(default_factory=SearchOptions)
    measures: tuple[str, ...] = tuple(m.key for m in DEFAULT_MEASURES)
    test: str = "randomization"
    alpha: float = 0.05
    seed: int = 42
    output: Path | None = None
    records: tuple[str, ...] = ("jsonl", "es")
    progress: bool = True

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"expected a mode in {sorted(MODES)}, found {self.mode!r}")
        if not 10 <= self.depth <= MAX_DEPTH:
            raise ConfigError(f"expected --depth between 10 and {MAX_DEPTH}, found {self.depth}")
        if self.num_candidates is not None and not self.depth <= self.num_candidates <= 10_000:
            raise ConfigError(
                f"expected --num-candidates between depth ({self.depth}) and 10000, found {self.num_candidates}"
            )
        if self.tune_on is not None and self.mode != "hybrid":
            raise ConfigError("--tune-on tunes fusion weights, so it needs the hybrid mode")
        unknown = set(self.records) - {"jsonl", "es"}
        if unknown:
            raise ConfigError(f"expected record sinks among jsonl, es; found {sorted(unknown)}")

    def identity(self) -> dict[str, Any]:
        """Everything that changes results (not where they go or how progress looks)."""
        data = asdict(self)
        for key in ("output", "records", "progress", "search"):
            data.pop(key)
        data["fusion"] = str(self.fusion)
        return data


@dataclass(slots=True)
class DatasetOutcome:
    dataset: Dataset
    index: str
    arms: dict[str, ArmResult]
    evaluations: dict[str, Evaluation]
    fusion: FusionSpec | None
    timings: dict[str, float]
    index_summary: IndexSummary | None


def git_sha() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).parent
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    arr = np.asarray(values, dtype=float)
    return {f"p{p}": round(float(np.percentile(arr, p)), 3) for p in (50, 95, 99)}


class Runner:
    def __init__(
        self,
        client: Elasticsearch,
        settings: ConnectionSettings,
        config: RunConfig,
        embedder: CachedEmbedder | None,
        *,
        console: Console | None = None,
        records_client: Elasticsearch | None = None,
    ) -> None:
        self.client = client
        self.settings = settings
        self.config = config
        self.embedder = embedder
        self.console = console or Console(stderr=True)
        self.records_client = records_client or client
        self.caps: Capabilities = probe(client)
        needs_vector = "vector" in MODES[config.mode]
        if needs_vector and embedder is None:
            raise ConfigError(f"mode {config.mode} needs an embedding model")

    # ------------------------------------------------------------------ plan
    def engine_kinds(self) -> list[str]:
        kinds = list(MODES[self.config.mode])
        if self.config.mode == "hybrid":
            for kind in ENGINE_HYBRID:
                needed = STRATEGIES[kind].needs_capability
                if needed and self.caps.has_retriever(needed):
                    kinds.append(kind)
                else:
                    self.console.print(
                        f"[dim]notice: the engine has no '{needed}' retriever; arm {ENGINE_HYBRID[kind]} is skipped "
                        "(hybrid is fused on the client)[/]"
                    )
        return kinds

    @staticmethod
    def arm_name(kind: str, expansion: Expansion | None) -> str:
        base = ENGINE_HYBRID.get(kind, kind)
        return f"{base}+{expansion.method.name}" if expansion else base

    # ------------------------------------------------------------------- run
    def run(self) -> tuple[Path, dict[str, Any]]:
        cfg = self.config
        specs = [s for d in cfg.datasets for s in resolve_specs(d)]
        try:
            datasets = [load_dataset(s, split=cfg.split) for s in specs]
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
            raise ConfigError(f"the same dataset was given twice: {names}")
        expansions = {d.name: select_expansion(d, cfg.expansion) for d in datasets} if cfg.expansion else {}
        identity = cfg.identity()
        identity["fingerprints"] = {d.name: d.fingerprint.combined for d in datasets}
        if self.embedder is not None:
            identity["model"] = {"id": self.embedder.spec.model_id, "revision": self.embedder.spec.revision}
        config_hash = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
        run_dir = cfg.output or Path("runs") / f"{cfg.mode}-{config_hash}"
        run_id = run_dir.name
        self._check_resume(run_dir, config_hash)
        manifest = self._manifest(run_id, config_hash, datasets, identity)
        write_json(run_dir / "manifest.json", {**manifest, "status": "running"})
        self.console.print(f"run {run_id} → {run_dir}", highlight=False)

        outcomes = [self._run_dataset(ds, expansions.get(ds.name), run_dir) for ds in datasets]
        results = self._results(outcomes, manifest)
        self._write(run_dir, run_id, results, outcomes, expansions)
        return run_dir, results

    def _check_resume(self, run_dir: Path, config_hash: str) -> None:
        existing = run_dir / "manifest.json"
        if existing.is_file():
            old = read_json(existing)
            if old.get("config_hash") != config_hash:
                raise ConfigError(
                    f"{run_dir} holds a run with another configuration (config hash {old.get('config_hash')}, "
                    f"this one {config_hash}); choose another --output"
                )
            self.console.print(f"resuming {run_dir}: finished arms are reused", highlight=False)

    def _manifest(
        self, run_id: str, config_hash: str, datasets: list[Dataset], identity: dict[str, Any]
    ) -> dict[str, Any]:
        spec = self.embedder.spec if self.embedder else None
        return {
            "run_id": run_id,
            "config_hash": config_hash,
            "created": datetime.now(UTC).isoformat(),
            "mode": self.config.mode,
            "fusion": str(self.config.fusion) if self.config.mode == "hybrid" else None,
            "fusion_params": self.config.fusion.to_dict() if self.config.mode == "hybrid" else None,
            "model": (
                {
                    "id": spec.model_id,
                    "revision": spec.revision,
                    "field": spec.field_name,
                    "query_prompt": spec.query_prompt,
                    "document_prompt": spec.document_prompt,
                }
                if spec
                else None
            ),
            "datasets": {
                d.name: {
                    "source": d.source,
                    "split": d.split,
                    "queries": len(d.queries),
                    "documents": d.corpus_size,
                    "fingerprint": asdict(d.fingerprint),
                }
                for d in datasets
            },
            "engine": {"url": self.settings.redacted(), **self.caps.to_dict()},
            "config": identity,
            "harness_version": __version__,
            "git_sha": git_sha(),
            "python": platform.python_version(),
        }

    # --------------------------------------------------------------- dataset
    def _run_dataset(self, ds: Dataset, expansion: Expansion | None, run_dir: Path) -> DatasetOutcome:
        cfg = self.config
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        embedders = [self.embedder] if self.embedder is not None and "vector" in MODES[cfg.mode] else []
        summary = build_index(
            self.client,
            ds,
            embedders,
            IndexOptions(progress=cfg.progress),
            console=self.console,
            caps=self.caps,
        )
        timings["index_s"] = round(time.perf_counter() - t0, 3)
        timings["index_embed_s"] = round(summary.embed_seconds, 3)
        index = summary.index
        ckpt = run_dir / "arms" / slug(ds.name)

        arms = self._engine_arms(ds, index, expansion, ckpt / (ds.split or "default"), timings)
        fusion: FusionSpec | None = None
        if cfg.mode == "hybrid":
            fusion = cfg.fusion
            if cfg.tune_on:
                fusion = self._tune(ds, index, ckpt)
            for exp in [None, expansion] if expansion else [None]:
                lex, vec = arms[self.arm_name("lexical", exp)], arms[self.arm_name("vector", exp)]
                arms[self.arm_name("hybrid", exp)] = self._fuse(lex, vec, fusion)
        evaluations = {arm: evaluate(ds.qrels, res.run, cfg.measures) for arm, res in arms.items()}
        return DatasetOutcome(ds, index, arms, evaluations, fusion, timings, summary)

    def _query_inputs(
        self, ds: Dataset, expansion: Expansion | None, timings: dict[str, float]
    ) -> list[QueryInput]:
        qids = sorted(ds.queries)
        texts = [ds.queries[q] for q in qids]
        lexical = [expansion.lexical_text(q, ds.queries[q]) for q in qids] if expansion is not None else texts
        for qid, text in zip(qids, lexical, strict=True):
            if not text.strip():
                raise RunError(f"query {qid} of {ds.name} is empty: nothing to search for")
        vectors: list[tuple[float, ...] | None] = [None] * len(qids)
        if self.embedder is not None and "vector" in MODES[self.config.mode]:
            t0 = time.perf_counter()
            if expansion is None:
                mat = self.embedder.embed_queries(texts)
            else:
                groups = [expansion.dense_texts(q, ds.queries[q]) for q in qids]
                flat = [t for g in groups for t in g]
                mat = combine_dense(self.embedder.embed_queries(flat), [len(g) for g in groups])
            timings["query_embed_s"] = round(timings.get("query_embed_s", 0.0) + time.perf_counter() - t0, 3)
            vectors = [tuple(float(x) for x in row) for row in mat]
        return [QueryInput(q, t, v) for q, t, v in zip(qids, lexical, vectors, strict=True)]

    def _context(self) -> SearchContext:
        cfg = self.config
        return SearchContext(
            depth=cfg.depth,
            bm25=cfg.bm25,
            lexical_field=cfg.lexical_field,
            vector_field=self.embedder.spec.field_name if self.embedder else None,
            num_candidates=cfg.num_candidates,
        )

    def _engine_arms(
        self,
        ds: Dataset,
        index: str,
        expansion: Expansion | None,
        ckpt: Path,
        timings: dict[str, float],
        kinds: Sequence[str] | None = None,
    ) -> dict[str, ArmResult]:
        kinds = list(kinds) if kinds is not None else self.engine_kinds()
        variants = [None, expansion] if expansion else [None]
        arms: dict[str, ArmResult] = {}
        todo: list[tuple[str, str, Expansion | None]] = []
        for exp in variants:
            for kind in kinds:
                name = self.arm_name(kind, exp)
                path = ckpt / f"{name}.json"
                if path.is_file():
                    arms[name] = ArmResult.from_dict(read_json(path))
                else:
                    todo.append((name, kind, exp))
        if not todo:
            return arms
        ctx = self._context()
        variants_needed = {(exp.label if exp else ""): exp for _, _, exp in todo}
        inputs = {label: self._query_inputs(ds, exp, timings) for label, exp in variants_needed.items()}
        strategies = {name: STRATEGIES[kind](ctx) for name, kind, _ in todo}
        requests: list[Request] = []
        n_queries = len(ds.queries)
        for i in range(n_queries):  # interleave: a query's arms travel in the same msearch
            for name, _, exp in todo:
                q = inputs[exp.label if exp else ""][i]
                requests.append((name, q.qid, strategies[name].body(q)))
        with self._progress() as progress:
            task = progress.add_task(
                "search", total=len(requests), what=f"{ds.name}: {', '.join(strategies)}"
            )
            done = run_searches(
                self.client, index, requests, self.config.search, on_done=lambda n: progress.advance(task, n)
            )
        for name, result in done.items():
            write_json(ckpt / f"{name}.json", result.to_dict())
            arms[name] = result
        return arms

    def _progress(self) -> Progress:
        return Progress(
            TextColumn("[bold]{task.fields[what]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            disable=not self.config.progress,
        )

    def _fuse(self, lex: ArmResult, vec: ArmResult, spec: FusionSpec) -> ArmResult:
        # compile ranx's numba kernels outside the timed section: JIT time is not query time
        first = next(iter(sorted(lex.run)), None)
        if first is not None:
            fuse({"lexical": {first: lex.run[first]}, "vector": {first: vec.run.get(first, {})}}, spec)
        t0 = time.perf_counter()
        fused = top_k(fuse({"lexical": lex.run, "vector": vec.run}, spec), self.config.depth)
        per_query_ms = (time.perf_counter() - t0) * 1000.0 / max(1, len(fused))
        for qid in lex.run:
            fused.setdefault(qid, {})
        return ArmResult(
            run=fused,
            took_ms={q: lex.took_ms.get(q, 0.0) + vec.took_ms.get(q, 0.0) for q in lex.run},
            client_ms={
                q: max(lex.client_ms.get(q, 0.0), vec.client_ms.get(q, 0.0)) + per_query_ms for q in lex.run
            },
            wall_s=max(lex.wall_s, vec.wall_s) + per_query_ms * len(fused) / 1000.0,
            retries=lex.retries + vec.retries,
        )

    def _tune(self, ds: Dataset, index: str, ckpt: Path) -> FusionSpec:
        cfg = self.config
        tune_split = cfg.tune_on or "train"
        if tune_split == (ds.split or "test"):
            raise ConfigError(f"--tune-on {tune_split} is the evaluation split: tuning must never see it")
        if tune_split not in ds.splits:
            raise ConfigError(
                f"dataset {ds.name} has no {tune_split!r} split to tune on (splits: {', '.join(ds.splits) or 'none'})"
            )
        train = ds.with_split(tune_split)
        arms = self._engine_arms(
            train, index, None, ckpt / f"tune-{tune_split}", {}, kinds=("lexical", "vector")
        )
        method = cfg.fusion.method if cfg.fusion.info.tunable else "wsum"
        tuned = optimize_fusion(
            train.qrels,
            {"lexical": arms["lexical"].run, "vector": arms["vector"].run},
            method=method,
            norm=cfg.fusion.norm,
            metric=PRIMARY_MEASURE.key,
        )
        self.console.print(f"fusion tuned on {ds.name}/{tune_split} ({len(train.queries)} queries): {tuned}")
        return tuned

    # --------------------------------------------------------------- results
    def _results(self, outcomes: list[DatasetOutcome], manifest: dict[str, Any]) -> dict[str, Any]:
        cfg = self.config
        per_query = {
            o.dataset.name: {arm: ev.per_query[PRIMARY_MEASURE.key] for arm, ev in o.evaluations.items()}
            for o in outcomes
        }
        pairs = self._pairs(list(outcomes[0].arms)) if outcomes else []
        comparisons = (
            compare_arms(
                per_query, pairs, measure=PRIMARY_MEASURE.key, test=cfg.test, alpha=cfg.alpha, seed=cfg.seed
            )
            if pairs
            else []
        )
        datasets: dict[str, Any] = {}
        for o in outcomes:
            name = o.dataset.name
            arms: dict[str, Any] = {}
            for arm, ev in o.evaluations.items():
                res = o.arms[arm]
                n = len(o.dataset.queries)
                arms[arm] = {
                    "metrics": {k: round(v, 6) for k, v in ev.means.items()},
                    "ci95": {
                        k: [round(ci.low, 6), round(ci.high, 6)]
                        for k in ev.means
                        for ci in [bootstrap_ci(list(ev.per_query[k].values()), seed=cfg.seed)]
                    },
                    "latency_ms": percentiles(list(res.client_ms.values())),
                    "engine_took_ms": percentiles(list(res.took_ms.values())),
                    "qps": round(n / res.wall_s, 2) if res.wall_s > 0 else None,
                    "queries": n,
                    "empty_queries": list(ev.empty_qids),
                    "retries": res.retries,
                }
            datasets[name] = {
                "arms": arms,
                "significance": [asdict(c) for c in comparisons if c.dataset == name],
                "paper": {
                    row.label: {"system": row.system, "score": row.score}
                    for row in reference_rows(name, "ndcg_at_10")
                },
                "index": o.index,
                "mapping_hash": o.index_summary.mapping_hash if o.index_summary else None,
                "fusion": o.fusion.to_dict() if o.fusion else None,
                "timings": o.timings,
                "fingerprint": o.dataset.fingerprint.combined,
            }
        manifest = {**manifest, "status": "complete", "finished": datetime.now(UTC).isoformat()}
        manifest["fusion_tuned"] = {
            o.dataset.name: str(o.fusion) for o in outcomes if cfg.tune_on and o.fusion
        }
        return {"datasets": datasets, "manifest": manifest}

    def _pairs(self, arms: list[str]) -> list[tuple[str, str]]:
        """(baseline, challenger) pairs tested for significance, Holm-corrected together."""
        wanted = [("lexical", "vector"), ("lexical", "hybrid"), ("vector", "hybrid")]
        wanted += [("hybrid", name) for name in ENGINE_HYBRID.values()]
        wanted += [(a.split("+")[0], a) for a in arms if "+" in a]
        return [(a, b) for a, b in wanted if a in arms and b in arms]

    def _write(
        self,
        run_dir: Path,
        run_id: str,
        results: dict[str, Any],
        outcomes: list[DatasetOutcome],
        expansions: dict[str, Expansion],
    ) -> None:
        rows: list[dict[str, Any]] = []
        for o in outcomes:
            name = o.dataset.name
            for arm, res in o.arms.items():
                write_trec(run_dir / "runs" / slug(name) / f"{arm}.trec", res.run, f"r2med-{arm}")
            for arm, ev in o.evaluations.items():
                for qid in ev.qids:
                    rows.append(
                        {
                            "dataset": name,
                            "arm": arm,
                            "qid": qid,
                            "metrics": {m: round(ev.per_query[m][qid], 6) for m in ev.per_query},
                        }
                    )
        write_jsonl(run_dir / "per_query.jsonl", rows)
        write_json(run_dir / "results.json", results)
        (run_dir / "report.md").write_text(render_markdown(results), encoding="utf-8")
        self._records(run_dir, run_id, results, outcomes, expansions)
        write_json(run_dir / "manifest.json", results["manifest"])

    def _records(
        self,
        run_dir: Path,
        run_id: str,
        results: dict[str, Any],
        outcomes: list[DatasetOutcome],
        expansions: dict[str, Expansion],
    ) -> None:
        sinks: list[Any] = []
        if "jsonl" in self.config.records:
            sinks.append(JsonlSink(run_dir / "records.jsonl"))
        if "es" in self.config.records:
            sinks.append(EsSink(self.records_client))
        timestamp = results["manifest"]["finished"]
        model = self.embedder.spec.model_id if self.embedder else None
        for o in outcomes:
            client, index = self.client, o.index

            def lookup(
                ids: Sequence[str], client: Elasticsearch = client, index: str = index
            ) -> dict[str, tuple[str, str]]:
                if not ids:
                    return {}
                docs = client.mget(index=index, ids=list(ids), source=["title", "text"])["docs"]
                return {
                    d["_id"]: (d["_source"].get("title", ""), d["_source"].get("text", ""))
                    for d in docs
                    if d.get("found")
                }

            exp = expansions.get(o.dataset.name)
            records = list(
                build_records(
                    run_id=run_id,
                    timestamp=timestamp,
                    dataset=o.dataset.name,
                    queries=o.dataset.queries,
                    qrels=o.dataset.qrels,
                    runs={arm: res.run for arm, res in o.arms.items()},
                    per_query={arm: ev.per_query for arm, ev in o.evaluations.items()},
                    doc_lookup=lookup,
                    latency_ms={arm: res.client_ms for arm, res in o.arms.items()},
                    expansions=dict(exp.documents) if exp else None,
                    baseline_arm="lexical" if "lexical" in o.arms else next(iter(o.arms)),
                    compare_arm="hybrid" if "hybrid" in o.arms else next(iter(o.arms)),
                    fusion=str(o.fusion) if o.fusion else None,
                    model=model,
                )
            )
            for sink in sinks:
                sink.write(records)
        for sink in sinks:
            sink.close()
