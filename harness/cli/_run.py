"""`harness run lexical|vector|hybrid` and `harness compare RUN_DIR...`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer
from elastic_transport import TransportError
from rich.table import Table

from harness._compare import compare_runs
from harness._runner import MAX_DEPTH, MODES, RunConfig, Runner
from harness._search import SearchOptions
from harness.cli._common import console, with_connection
from harness.eval import FUSION_METHODS, STAT_TESTS, FusionSpec
from harness.strategies import LEXICAL_FIELDS
from indexer import ConfigError, ConnectionSettings, RunError, connect
from indexer._layout import BM25_FIELDS
from indexer.embed import CachedEmbedder, EmbeddingCache, Encoder, resolve_model


def _mode(value: str) -> str:
    if value not in MODES:
        raise typer.BadParameter(f"expected one of {', '.join(MODES)}, found {value!r}")
    return value


@with_connection
def run(
    mode: Annotated[str, typer.Argument(help="lexical, vector or hybrid.", callback=_mode)],
    dataset: Annotated[
        list[str] | None,
        typer.Option(
            "--dataset",
            "-d",
            help="r2med (all eight; default), r2med/<Name>, sample, or a folder; repeatable.",
        ),
    ] = None,
    split: Annotated[
        str | None, typer.Option("--split", help="Evaluation split for BEIR-style datasets (default test).")
    ] = None,
    model: Annotated[
        str, typer.Option("--model", "-m", help="Embedding model name or local folder.")
    ] = "minilm",
    query_prompt: Annotated[
        str | None, typer.Option("--query-prompt", help="Override the model's query prompt.")
    ] = None,
    fusion: Annotated[
        str,
        typer.Option(
            "--fusion", help="rrf[:k=60] | combsum|combmnz|wsum[:norm=min-max|zmuv|max,weights=a/b]."
        ),
    ] = "rrf",
    tune_on: Annotated[
        str | None, typer.Option("--tune-on", help="Tune fusion weights on this split (e.g. train).")
    ] = None,
    expansion: Annotated[str | None, typer.Option("--expansion", help="hyde|query2doc|lamer[:LLM].")] = None,
    depth: Annotated[int, typer.Option("--depth", help=f"Results per query (10..{MAX_DEPTH}).")] = 100,
    num_candidates: Annotated[
        int | None, typer.Option("--num-candidates", help="kNN candidates (default 10 × depth).")
    ] = None,
    bm25: Annotated[
        str, typer.Option("--bm25", help=f"BM25 parameters: {', '.join(BM25_FIELDS)} (r2med: k1=0.9, b=0.4).")
    ] = "es",
    lexical_field: Annotated[
        str, typer.Option("--lexical-field", help=f"{' or '.join(LEXICAL_FIELDS)}.")
    ] = "combined",
    batch_size: Annotated[int, typer.Option("--batch-size", help="Searches per msearch request.")] = 32,
    concurrency: Annotated[int, typer.Option("--concurrency", help="msearch requests in flight.")] = 2,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per msearch request.")] = 60.0,
    max_retries: Annotated[
        int,
        typer.Option(
            "--max-retries", min=0, max=50, help="Retries per msearch request (429, 5xx, connection lost)."
        ),
    ] = 5,
    test: Annotated[
        str, typer.Option("--test", help=f"Significance test: {', '.join(STAT_TESTS)}.")
    ] = "randomization",
    seed: Annotated[int, typer.Option("--seed")] = 42,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Run directory (default runs/<mode>-<config hash>).")
    ] = None,
    records: Annotated[
        str, typer.Option("--records", help="Evaluation record sinks: jsonl,es | jsonl | none.")
    ] = "jsonl,es",
    records_url: Annotated[
        str | None, typer.Option("--records-url", help="Write records to this cluster instead.")
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    *,
    conn: ConnectionSettings,
) -> None:
    """Run lexical, vector or hybrid retrieval, evaluate with ranx, and write a run directory."""
    if bm25 not in BM25_FIELDS:
        raise ConfigError(f"expected --bm25 in {sorted(BM25_FIELDS)}, found {bm25!r}")
    if lexical_field not in LEXICAL_FIELDS:
        raise ConfigError(f"expected --lexical-field in {list(LEXICAL_FIELDS)}, found {lexical_field!r}")
    if test not in STAT_TESTS:
        raise ConfigError(f"expected --test in {sorted(STAT_TESTS)}, found {test!r}")
    if timeout <= 0:
        raise ConfigError(f"expected a positive --timeout, found {timeout}")
    sinks = tuple(s for s in records.split(",") if s and s != "none")
    method = FUSION_METHODS.get(fusion.split(":", 1)[0].strip().lower())
    if tune_on and method is not None and "weights" in method.params and "weights=" not in fusion:
        # equal weights as the starting point; --tune-on replaces them with weights fitted on the train split
        fusion = f"{fusion}{',' if ':' in fusion else ':'}weights=0.5/0.5"
    cfg = RunConfig(
        mode=mode,
        datasets=tuple(dataset or ["r2med"]),
        split=split,
        fusion=FusionSpec.parse(fusion),
        tune_on=tune_on,
        expansion=expansion,
        depth=depth,
        num_candidates=num_candidates,
        bm25=bm25,
        lexical_field=lexical_field,
        search=SearchOptions(
            batch_size=batch_size, concurrency=concurrency, timeout_s=timeout, max_retries=max_retries
        ),
        test=test,
        seed=seed,
        output=output,
        records=sinks,
        progress=progress,
    )
    settings = conn
    embedder = None
    if "vector" in MODES[mode]:
        embedder = CachedEmbedder(Encoder(resolve_model(model, query_prompt=query_prompt)), EmbeddingCache())
    client = connect(settings)
    records_client = None
    if records_url and "es" in sinks:
        records_settings = dataclasses.replace(conn, url=records_url)  # same credentials, another cluster
        records_client = connect(records_settings)
    try:
        run_dir, results = Runner(
            client, settings, cfg, embedder, console=console, records_client=records_client
        ).run()
    except TransportError as exc:  # the connection dropped outside the retried msearch path
        raise RunError(
            f"lost the connection to Elasticsearch at {settings.url} during the run: {exc}. "
            "Arms finished so far are checkpointed in the run directory; the same command resumes from them"
        ) from None
    print_results(results)
    console.print(
        f"\nrun directory: {run_dir}  (results.json, report.md, per_query.jsonl, runs/, records.jsonl)"
    )


def print_results(results: dict[str, Any]) -> None:
    for name, data in results["datasets"].items():
        table = Table(
            title=f"{name} ({next(iter(data['arms'].values()))['queries']} queries)", title_justify="left"
        )
        for col in (
            "arm",
            "nDCG@10 [95% CI]",
            "R@100",
            "MRR@100",
            "unjud@10",
            "ms p50/p95/p99",
            "took p50",
            "qps",
        ):
            table.add_column(col, justify="left" if col == "arm" else "right")
        for arm, a in data["arms"].items():
            m, ci, lat = a["metrics"], a["ci95"]["ndcg@10"], a["latency_ms"]
            table.add_row(
                arm,
                f"{m['ndcg@10']:.4f} [{ci[0]:.3f},{ci[1]:.3f}]",
                f"{m.get('recall@100', 0):.4f}",
                f"{m.get('mrr@100', 0):.4f}",
                f"{m.get('unjudged@10', 0):.2f}",
                f"{lat['p50']:.0f}/{lat['p95']:.0f}/{lat['p99']:.0f}",
                f"{a['engine_took_ms']['p50']:.0f}",
                f"{a['qps']}",
            )
        for label, ref in data["paper"].items():
            table.add_row(
                f"[dim]paper {label}[/]",
                f"[dim]{ref['score']:.4f}[/]",
                "",
                "",
                "",
                "",
                "",
                f"[dim]{ref['system']}[/]",
            )
        console.print(table)
        for c in data["significance"]:
            verdict = "[green]significant[/]" if c["significant"] else "not significant"
            console.print(
                f"  {c['arm_b']} vs {c['arm_a']}: Δ nDCG@10 {c['delta']:+.4f}, p={c['p_value']:.3g}, "
                f"Holm p={c['p_holm']:.3g} ({c['test']}) → {verdict}",
                highlight=False,
            )
    console.print(
        "[dim]ms = client round trip of the msearch that carried the query; took = engine time per search[/]"
    )


def compare(
    run_dirs: Annotated[list[Path], typer.Argument(help="Two or more run directories.")],
    test: Annotated[str, typer.Option("--test", help=f"{', '.join(STAT_TESTS)}.")] = "randomization",
    measure: Annotated[str, typer.Option("--measure")] = "ndcg@10",
    alpha: Annotated[float, typer.Option("--alpha")] = 0.05,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the comparisons here.")] = None,
) -> None:
    """Paired significance tests across runs (Holm-corrected over arms × datasets)."""
    table, comparisons = compare_runs(run_dirs, test=test, measure=measure, alpha=alpha)
    console.print(table)
    if json_out is not None:
        from harness._output import write_json

        write_json(json_out, comparisons)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("compare")(compare)
