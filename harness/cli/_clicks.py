"""``harness clicks``: judgments and query sets from User Behavior Insights click logs, and simulated logs.

    harness clicks simulate -o DIR                     a seeded click log over the sample (+ systems' runs)
    harness clicks judgments --events FILE -o FILE     COEC (or raw CTR) judgments, in any judgments format
    harness clicks queries --events FILE -o FILE       a query set sampled from the log

Without ``--events`` the log is read from the cluster's ``ubi_events`` / ``ubi_queries`` indices.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Annotated, Any

import typer

from base import ConfigError, write_json_atomic, write_jsonl_atomic
from harness.cli._common import CONNECTION, CONNECTION_ALIASES, URL, console
from harness.cli._options import Deprecated, with_deprecated
from harness.cli._views import Flag, with_keys
from harness.experiment import Settings, View
from harness.judgments.clicks import (
    ClickJudgments,
    ClickModelSpec,
    QuerySetSpec,
    SimulationSpec,
    UbiSource,
    agreement,
    agreement_lines,
    from_log,
    judgment_lines,
    left_out,
    query_frequencies,
    query_ids,
    query_set_lines,
    rated,
    read_log,
    sample_queries,
    simulate,
    summary,
    write_simulation,
)
from harness.judgments.sources import Clicks
from harness.results import load_ranking, rank_run
from indexer import (
    JUDGMENT_FORMATS,
    Dataset,
    RatedPair,
    connect,
    index_ubi,
    load_dataset,
    read_judgments,
    write_judgments,
)

clicks_app = typer.Typer(
    help="Judgments and query sets from User Behavior Insights (UBI) click logs; simulated logs to test them.",
    no_args_is_help=True,
)

LOG, MODEL, SAMPLE, SIM, AGREE, OUT = "Log", "Click model", "Sample", "Simulation", "Agreement", "Output"
#: the UBI log's flags (keys of the clicks source: ``judgments.events``, ...)
LOG_FLAGS: tuple[Flag, ...] = (
    Flag("judgments.events", ("--events",), LOG, metavar="FILE", source="clicks"),
    Flag("judgments.queries", ("--queries",), LOG, metavar="FILE", source="clicks"),
    Flag("judgments.events_index", ("--events-index",), LOG, source="clicks"),
    Flag("judgments.queries_index", ("--queries-index",), LOG, source="clicks"),
    Flag("judgments.start", ("--start",), LOG, source="clicks"),
    Flag("judgments.end", ("--end",), LOG, source="clicks"),
)
#: ``harness clicks judgments``: the clicks source of an experiment's ``[judgments]``, as flags
JUDGMENTS = View("harness clicks judgments", tables=CONNECTION, source="clicks")
JUDGMENTS_FLAGS: tuple[Flag, ...] = (
    *LOG_FLAGS,
    Flag("judgments.model", ("--click-model",), MODEL, source="clicks"),
    Flag("judgments.max_rank", ("--max-rank",), MODEL, source="clicks"),
    Flag("judgments.min_impressions", ("--min-impressions",), MODEL, source="clicks"),
    Flag("judgments.cuts", ("--cuts",), MODEL, metavar="CUTS", source="clicks"),
    URL,
)
_LOG_KEYS = ("events", "queries", "events_index", "queries_index", "start", "end")
QUERIES = View(
    "harness clicks queries", tables=("sample", *CONNECTION), source="clicks", source_keys=_LOG_KEYS
)
QUERIES_FLAGS: tuple[Flag, ...] = (
    *LOG_FLAGS,
    Flag("sample.method", ("--method",), SAMPLE),
    Flag("sample.size", ("--size",), SAMPLE),
    Flag("sample.seed", ("--seed",), SAMPLE),
    URL,
)
SIMULATE = View(
    "harness clicks simulate",
    tables=("simulate", *CONNECTION),
    source="clicks",
    source_keys=("events_index", "queries_index"),
)
SIMULATE_FLAGS: tuple[Flag, ...] = (
    Flag("simulate.searches", ("--searches",), SIM),
    Flag("simulate.seed", ("--seed",), SIM),
    Flag("simulate.impressions", ("--impressions",), SIM),
    Flag("judgments.events_index", ("--events-index",), OUT, source="clicks"),
    Flag("judgments.queries_index", ("--queries-index",), OUT, source="clicks"),
    URL,
)

DATASET_HELP = "Dataset whose query ids name the log's queries (matched by text)."
# --output/-o as harness.cli._options.output_option spells it (an annotation mypy can read)
JudgmentsOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Judgments file to write (and a .clicks.json summary beside it).",
        rich_help_panel=OUT,
    ),
]
QuerySetOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Query set to write (JSONL: _id, text, frequency).", rich_help_panel=OUT
    ),
]
LogOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Folder to write ubi_queries.jsonl, ubi_events.jsonl and runs/*.trec to.",
        rich_help_panel=OUT,
    ),
]


def _dataset(name: str | None) -> Dataset | None:
    return load_dataset(name) if name else None


def _reference(against: Path | None, dataset: Dataset | None) -> tuple[dict[str, dict[str, int]], str] | None:
    if against is not None:
        judged = read_judgments(against).qrels(dataset.queries if dataset else None)
        return judged.qrels, str(against)
    return (dataset.qrels, f"{dataset.name} qrels") if dataset else None


def _runs(patterns: list[str] | None) -> dict[str, dict[str, dict[str, float]]]:
    paths = sorted({Path(p) for pattern in patterns or [] for p in (glob.glob(pattern) or [pattern])})
    return {path.stem: rank_run(load_ranking(path)) for path in paths}


def _write(
    output: Path, fmt: str, pairs: list[RatedPair], judged: ClickJudgments, measured: Any, reference: Any
) -> None:
    """The judgments file and its ``.clicks.json``; the line says how many pairs it holds (and any left out)."""
    path = write_judgments(output, pairs, fmt)
    kept = summary(judged, measured, reference and reference[1]) | {"pairs_written": len(pairs)}
    write_json_atomic(path.with_name(path.name + ".clicks.json"), kept)
    dropped = left_out(judged, pairs)
    console.print(
        f"wrote {path} ({fmt}: {len(pairs)} pairs"
        + (f"; {dropped} pairs of texts that are none of the dataset's queries left out" if dropped else "")
        + f") and {path.name}.clicks.json",
        highlight=False,
    )


@with_deprecated(Deprecated("--model", "click_model", new="--click-model"), *CONNECTION_ALIASES)
@with_keys(JUDGMENTS, JUDGMENTS_FLAGS, panel=OUT)
def judgments_command(
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help=DATASET_HELP, rich_help_panel=AGREE)
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Judgments to measure agreement with (default: --dataset's qrels).",
            rich_help_panel=AGREE,
        ),
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option(
            "--runs",
            help="TREC run files (globs) to order by nDCG@10 under both labels.",
            rich_help_panel=AGREE,
        ),
    ] = None,
    output: JudgmentsOutOpt = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help=f"{', '.join(JUDGMENT_FORMATS)} (default trec).", rich_help_panel=OUT),
    ] = None,
    *,
    keys: Settings,
) -> None:
    """Judgments per (query, document) from a UBI click log: clicks over the clicks expected at the ranks shown."""
    source = keys.source
    assert isinstance(source, Clicks)
    data = _dataset(dataset)
    log = read_log(source.log, source.model, keys.connection())
    for (
        note
    ) in log.notes:  # what the reader made of the log (bulk action lines, 0-based ranks, empty searches)
        console.print(f"{log.source}: {note}", highlight=False)
    judged, ids = from_log(log, source.model, data.queries if data else None)
    for line in judgment_lines(judged):
        console.print(line, highlight=False)
    reference = _reference(against, data)
    measured = agreement(judged, reference[0], ids, runs=_runs(runs) or None) if reference else None
    for line in agreement_lines(measured, reference[1]) if measured and reference else []:
        console.print(line, highlight=False)
    if output is not None:
        _write(
            output, fmt or "trec", rated(judged, ids, dataset=data is not None), judged, measured, reference
        )


@with_deprecated(*CONNECTION_ALIASES)
@with_keys(QUERIES, QUERIES_FLAGS, panel=OUT)
def queries_command(
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help=DATASET_HELP, rich_help_panel=SAMPLE)
    ] = None,
    output: QuerySetOutOpt = None,
    *,
    keys: Settings,
) -> None:
    """A query set from a UBI log: random, probability proportional to frequency (pps), or the top N."""
    spec = keys.table(ClickModelSpec)
    log = read_log(keys.table(UbiSource), spec, keys.connection())
    frequencies = query_frequencies(log, spec.event_filter())
    data = _dataset(dataset)
    chosen = sample_queries(
        frequencies, keys.table(QuerySetSpec), query_ids(frequencies, data.queries if data else None)
    )
    for line in query_set_lines(chosen):
        console.print(line, highlight=False)
    if output is not None:
        write_jsonl_atomic(
            output, ({"_id": q.qid, "text": q.text, "frequency": q.frequency} for q in chosen.queries)
        )
        console.print(f"wrote {output}", highlight=False)


@with_deprecated(*CONNECTION_ALIASES)
@with_keys(SIMULATE, SIMULATE_FLAGS, panel=OUT)
def simulate_command(
    output: LogOutOpt = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset", "-d", help="Judged dataset to simulate (default sample).", rich_help_panel=SIM
        ),
    ] = None,
    to_index: Annotated[
        bool,
        typer.Option(
            "--index", help="Also index the log into the cluster's UBI indices.", rich_help_panel=OUT
        ),
    ] = False,
    *,
    keys: Settings,
) -> None:
    """A seeded UBI log of a judged dataset's queries, clicked by a position-based click model."""
    if output is None:
        raise ConfigError("--output: expected a folder to write the simulated log to, found none")
    data = load_dataset(dataset or "sample")
    sim = simulate(data.queries, data.qrels, [d.id for d in data.iter_corpus()], keys.table(SimulationSpec))
    written = write_simulation(output, sim)
    console.print(
        f"{sim.log.source}: {len(sim.log.events)} events over {len(sim.rankings)} queries of {data.name} "
        f"→ {', '.join(str(p) for p in written[:2])}, {len(written) - 2} systems' runs in {written[2].parent}",
        highlight=False,
    )
    if to_index:
        ubi = keys.table(UbiSource)
        backend = connect(keys.connection())
        try:
            counts = index_ubi(backend, sim.log, events_index=ubi.events_in, queries_index=ubi.queries_in)
        finally:
            backend.close()
        console.print(
            f"indexed {counts[0]} searches and {counts[1]} events into {backend.url}", highlight=False
        )


def register(app: typer.Typer) -> None:
    clicks_app.command("judgments")(judgments_command)
    clicks_app.command("queries")(queries_command)
    clicks_app.command("simulate")(simulate_command)
    app.add_typer(clicks_app, name="clicks")
