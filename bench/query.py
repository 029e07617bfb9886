"""Query benchmarks (issue 5, section 12), against a real Elasticsearch or OpenSearch.

    python bench/query.py [--repeats N] [--batch-size 32] [--concurrency 2]

On the SciFact sample (test queries) and its index built by the harness (``build_index``
with all-MiniLM-L6-v2; a no-op when it is already there):

1. Throughput: batched msearch (``harness._search.run_searches``, batches of 32, 2 concurrent
   requests) against one ``search`` per query in a loop on one thread, on the same queries,
   the same bodies (``Lexical``/``Vector`` strategies) and the same engine: queries per second
   each and their ratio, for the lexical and the vector arm. The rankings of both ways are
   compared (they must be identical).
2. Hybrid: the wall time of both arms interleaved in one ``run_searches`` call (as
   ``harness run hybrid`` sends them) against the lexical then the vector arm run one after
   the other (two calls).

Both sides are warmed up first; each figure is the median of ``--repeats`` runs, alternating
which side goes first. The engine is ``ES_URL`` when set (either engine), otherwise a managed
node (``$R2MED_BENCH_ENGINE``, default elasticsearch) on a free port, stopped at the end.
Nothing is asserted: figures are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import Row, engine, median, print_summary, spread
from rich.console import Console

from harness._search import Request, SearchOptions, run_searches
from harness.strategies import Lexical, QueryInput, SearchContext, Vector
from indexer import Backend, IndexOptions, build_index
from indexer.data import load_dataset
from indexer.embed import CachedEmbedder, EmbeddingCache, Encoder, resolve_model

MSEARCH_TARGET = 3.0
ARMS = ("lexical", "vector")
Run = dict[str, list[tuple[str, float]]]  # qid -> ranked (docid, score), in hit order
Took = dict[str, list[float]]  # side -> mean engine took (ms) per repeat


def one_by_one(backend: Backend, index: str, requests: Sequence[Request]) -> tuple[float, Run, float]:
    """(seconds, rankings, mean engine ``took`` ms) for one ``search`` call per request, in a loop."""
    run: Run = {}
    took = 0.0
    started = time.perf_counter()
    for _, qid, body in requests:
        answer = backend.search(index, body)
        run[qid] = [(hit.id, float(hit.score or 0.0)) for hit in answer.hits]
        took += answer.took_ms
    return time.perf_counter() - started, run, took / len(requests)


def batched(
    backend: Backend, index: str, requests: Sequence[Request], options: SearchOptions
) -> tuple[float, dict[str, Run], float]:
    """(seconds, arm -> rankings, mean engine ``took`` ms) for one ``run_searches`` call (its wall time)."""
    results = run_searches(backend, index, requests, options)
    walls = {res.wall_s for res in results.values()}
    runs = {arm: {qid: list(hits.items()) for qid, hits in res.run.items()} for arm, res in results.items()}
    took = sum(t for res in results.values() for t in res.took_ms.values())
    return walls.pop(), runs, took / len(requests)


def alternate(repeats: int, sides: dict[str, Callable[[], float]], label: str) -> dict[str, list[float]]:
    """Run each side ``repeats`` times, alternating which goes first; seconds per side."""
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for r in range(repeats):
        for name in names if r % 2 == 0 else list(reversed(names)):
            seconds[name].append(sides[name]())
        print(
            f"    {label} repeat {r + 1}/{repeats}: "
            + ", ".join(f"{name} {seconds[name][-1]:.3f} s" for name in names),
            flush=True,
        )
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per side (median reported)")
    parser.add_argument("--batch-size", type=int, default=32, help="searches per msearch request")
    parser.add_argument("--concurrency", type=int, default=2, help="msearch requests in flight")
    parser.add_argument("--depth", type=int, default=100, help="hits per query")
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure here")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, found {args.repeats}")
    options = SearchOptions(batch_size=args.batch_size, concurrency=args.concurrency)

    with engine() as es:
        client = es.backend
        print(
            f"engine: {es.description}; cpus: {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}; "
            f"repeats: {args.repeats}",
            flush=True,
        )
        dataset = load_dataset("sample")
        embedder = CachedEmbedder(Encoder(resolve_model(args.model)), EmbeddingCache())
        summary = build_index(
            client, dataset, [embedder], IndexOptions(progress=False), console=Console(stderr=True)
        )
        print(
            f"index: {summary.index} (alias {summary.alias}), {summary.docs:,} docs; "
            f"{'built' if summary.indexed else 'already built'} in {summary.seconds:.1f} s, "
            f"model calls {summary.model_calls}",
            flush=True,
        )
        qids = sorted(dataset.queries)
        texts = [dataset.queries[q] for q in qids]
        started = time.perf_counter()
        vectors = embedder.embed_queries(texts)
        print(
            f"queries: {len(qids)} SciFact test queries; vectors in {time.perf_counter() - started:.2f} s "
            f"(model calls {embedder.stats.model_calls - summary.model_calls})",
            flush=True,
        )
        ctx = SearchContext(depth=args.depth, vector_field=embedder.spec.field_name, dialect=client)
        inputs = [
            QueryInput(q, t, tuple(float(x) for x in v)) for q, t, v in zip(qids, texts, vectors, strict=True)
        ]
        strategies = {"lexical": Lexical(ctx), "vector": Vector(ctx)}
        requests: dict[str, list[Request]] = {
            arm: [(arm, q.qid, strategy.body(q)) for q in inputs] for arm, strategy in strategies.items()
        }
        index = summary.alias
        n = len(qids)

        # warm-up: every body once each way (caches, JIT, HNSW graph pages)
        for arm in ARMS:
            one_by_one(client, index, requests[arm])
            batched(client, index, requests[arm], options)

        results: dict[str, Any] = {
            "queries": n,
            "batch_size": args.batch_size,
            "concurrency": args.concurrency,
        }
        rows: list[Row] = []
        for arm in ARMS:
            rankings: dict[str, Run] = {}
            took: dict[str, list[float]] = {"msearch": [], "single": []}

            def single(arm: str = arm, rankings: dict[str, Run] = rankings, took: Took = took) -> float:
                seconds, rankings["single"], mean_took = one_by_one(client, index, requests[arm])
                took["single"].append(mean_took)
                return seconds

            def msearch(arm: str = arm, rankings: dict[str, Run] = rankings, took: Took = took) -> float:
                seconds, runs, mean_took = batched(client, index, requests[arm], options)
                rankings["msearch"] = runs[arm]
                took["msearch"].append(mean_took)
                return seconds

            seconds = alternate(args.repeats, {"msearch": msearch, "single": single}, arm)
            qps = {side: [n / s for s in values] for side, values in seconds.items()}
            paired = [m / o for m, o in zip(qps["msearch"], qps["single"], strict=True)]
            ratio = median(paired)  # median of the paired (same-repeat) ratios
            of_medians = median(qps["msearch"]) / median(qps["single"])
            identical = rankings["single"] == rankings["msearch"]
            results[arm] = {
                "qps": qps,
                "ratio": ratio,
                "ratio_per_repeat": paired,
                "ratio_of_medians": of_medians,
                "identical_rankings": identical,
                "took_ms": took,
            }
            print(f"{arm}: {n} queries, depth {args.depth}")
            print(
                f"    msearch (batches of {args.batch_size}, {args.concurrency} in flight): "
                f"{spread(qps['msearch'])} queries/s"
            )
            print(f"    one search per query (1 thread):        {spread(qps['single'])} queries/s")
            print(
                f"    ratio (median of paired per-repeat ratios): {ratio:.2f}x (target >= {MSEARCH_TARGET:.0f}x); "
                f"per repeat: {', '.join(f'{x:.2f}x' for x in paired)}; ratio of the medians: {of_medians:.2f}x"
            )
            print(f"    identical rankings both ways: {identical}")
            print(
                f"    engine took per search (mean; in msearch it includes queueing for a search thread): "
                f"msearch {spread(took['msearch'], '{:.1f}')} ms, one-by-one {spread(took['single'], '{:.1f}')} ms"
            )
            rows.append(
                Row(
                    f"{arm} msearch vs one-by-one",
                    f"{median(qps['msearch']):,.1f} q/s",
                    f"{median(qps['single']):,.1f} q/s",
                    ratio,
                    f">= {MSEARCH_TARGET:.0f}x",
                    ratio >= MSEARCH_TARGET,
                )
            )

        interleaved = [
            req for pair in zip(requests["lexical"], requests["vector"], strict=True) for req in pair
        ]

        def hybrid() -> float:
            return batched(client, index, interleaved, options)[0]

        def sequential() -> float:
            return sum(batched(client, index, requests[arm], options)[0] for arm in ARMS)

        hybrid(), sequential()  # warm-up of the interleaved shape
        seconds = alternate(args.repeats, {"hybrid": hybrid, "sequential": sequential}, "hybrid")
        h, s = median(seconds["hybrid"]), median(seconds["sequential"])
        paired = [q / i for q, i in zip(seconds["sequential"], seconds["hybrid"], strict=True)]
        results["hybrid"] = {"seconds": seconds, "ratio": median(paired), "ratio_of_medians": s / h}
        print(f"hybrid: lexical + vector, {n} queries each ({2 * n} searches)")
        print(f"    interleaved, one run_searches call:  {spread(seconds['hybrid'], '{:.3f}')} s")
        print(f"    lexical then vector, two calls:      {spread(seconds['sequential'], '{:.3f}')} s")
        print(
            f"    ratio (sequential / interleaved, median of paired ratios): {median(paired):.2f}x; "
            f"per repeat: {', '.join(f'{x:.2f}x' for x in paired)}; ratio of the medians: {s / h:.2f}x"
        )
        rows.append(
            Row(
                "hybrid wall time, interleaved vs sequential",
                f"{h:.3f} s",
                f"{s:.3f} s",
                median(paired),
                "(none set)",
                None,
            )
        )
    print_summary("summary (bench/query.py)", rows)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
