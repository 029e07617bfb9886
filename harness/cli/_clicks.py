"""``harness clicks``: judgments and query sets from User Behavior Insights click logs, and simulated logs.

    harness clicks simulate -o DIR                     a seeded click log over the sample (+ systems' runs)
    harness clicks judgments --events FILE -o FILE     COEC (or raw CTR) judgments, in any judgments format
    harness clicks queries --events FILE -o FILE       a query set sampled from the log

Without ``--events`` the log is read from the cluster's ``ubi_events`` / ``ubi_queries`` indices.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from base import ConfigError, write_json_atomic, write_jsonl_atomic
from harness.cli._common import console, with_connection
from harness.cli._options import Deprecated, default_of, given, with_deprecated, with_panels
from harness.judgments.clicks import (
    IMPRESSION_MODES,
    MODEL_NAMES,
    SAMPLE_METHODS,
    ClickJudgments,
    ClickModelSpec,
    QuerySetSpec,
    SimulationSpec,
    SpecError,
    UbiSource,
    agreement,
    agreement_lines,
    as_flag,
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
from harness.results import load_ranking, rank_run
from indexer import (
    EVENTS_INDEX,
    JUDGMENT_FORMATS,
    QUERIES_INDEX,
    ConnectionSettings,
    Dataset,
    RatedPair,
    connect,
    index_ubi,
    load_dataset,
    read_judgments,
    write_judgments,
)

T = TypeVar("T")

clicks_app = typer.Typer(
    help="Judgments and query sets from User Behavior Insights (UBI) click logs; simulated logs to test them.",
    no_args_is_help=True,
)

EventsOpt = Annotated[
    Path | None,
    typer.Option("--events", help="JSON-lines export of ubi_events (default: read the cluster's index)."),
]
QueriesOpt = Annotated[
    Path | None,
    typer.Option("--queries", help="JSON-lines export of ubi_queries (the searches and their hits)."),
]
EventsIndexOpt = Annotated[
    str | None, typer.Option("--events-index", help=f"The cluster's events index (default {EVENTS_INDEX}).")
]
QueriesIndexOpt = Annotated[
    str | None,
    typer.Option("--queries-index", help=f"The cluster's queries index (default {QUERIES_INDEX})."),
]
DatasetOpt = Annotated[
    str | None,
    typer.Option("--dataset", "-d", help="Dataset whose query ids name the log's queries (matched by text)."),
]
StartOpt = Annotated[str | None, typer.Option("--start", help="First day of events read (YYYY-MM-DD).")]
EndOpt = Annotated[str | None, typer.Option("--end", help="Last day of events read (YYYY-MM-DD).")]
SeedOpt = Annotated[
    int | None, typer.Option("--seed", help=f"Random seed (default {default_of(QuerySetSpec, 'seed')}).")
]
# --output/-o as harness.cli._options.output_option spells it (an annotation mypy can read)
JudgmentsOutOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Judgments file to write (and a .clicks.json summary beside it)."),
]
QuerySetOutOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Query set to write (JSONL: _id, text, frequency).")
]
LogOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Folder to write ubi_queries.jsonl, ubi_events.jsonl and runs/*.trec to."
    ),
]


def _date(value: str | None, flag: str) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        raise ConfigError(f"{flag}: expected a date YYYY-MM-DD, found {value!r}") from None


#: spec keys whose flag is not the key's own spelling
FLAGS = {"model": "--click-model"}


def _built(kind: Callable[..., T], **values: Any) -> T:
    """``kind`` built from the flags given (defaults: the spec's); a value refused names its flag."""
    try:
        return kind(**given(**values))
    except SpecError as exc:
        raise exc.at(FLAGS.get(exc.key, as_flag(exc.key))) from None


def _source(
    events: Path | None, queries: Path | None, events_index: str | None, queries_index: str | None
) -> UbiSource:
    if events is not None:
        if events_index or queries_index:
            raise ConfigError("expected --events (a file) or --events-index (the cluster), found both")
        return UbiSource(events=events, queries=queries)
    if queries is not None:
        raise ConfigError("--queries (a file) needs --events (a file): found --queries alone")
    return UbiSource.cluster(events_index or EVENTS_INDEX, queries_index or QUERIES_INDEX)


def _cuts(text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        return tuple(float(c) for c in text.split(",") if c.strip())
    except ValueError:
        raise ConfigError(f"--cuts: expected numbers separated by commas, found {text!r}") from None


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


@with_panels(
    {
        "Log": ["events", "queries", "events_index", "queries_index", "start", "end"],
        "Click model": ["click_model", "max_rank", "min_impressions", "cuts"],
        "Agreement": ["dataset", "against", "runs"],
        "Output": ["output", "fmt"],
    }
)
@with_deprecated(Deprecated("--model", "click_model", new="--click-model"))
@with_connection
def judgments_command(
    events: EventsOpt = None,
    queries: QueriesOpt = None,
    events_index: EventsIndexOpt = None,
    queries_index: QueriesIndexOpt = None,
    click_model: Annotated[
        str | None,
        typer.Option(
            "--click-model",
            help=f"{' | '.join(MODEL_NAMES)} (default {default_of(ClickModelSpec, 'model')}).",
        ),
    ] = None,
    max_rank: Annotated[
        int | None,
        typer.Option(
            "--max-rank",
            min=1,
            help=f"Deepest rank read (default {default_of(ClickModelSpec, 'max_rank')}).",
        ),
    ] = None,
    start: StartOpt = None,
    end: EndOpt = None,
    min_impressions: Annotated[
        int | None,
        typer.Option(
            "--min-impressions",
            min=1,
            help=f"Pairs shown fewer times are left out (default {default_of(ClickModelSpec, 'min_impressions')}).",
        ),
    ] = None,
    cuts: Annotated[
        str | None,
        typer.Option(
            "--cuts",
            help="Score cut points for grades 1, 2, ... (default "
            f"{','.join(f'{c:g}' for c in default_of(ClickModelSpec, 'cuts'))}: one cut, binary grades).",
        ),
    ] = None,
    dataset: DatasetOpt = None,
    against: Annotated[
        Path | None,
        typer.Option("--against", help="Judgments to measure agreement with (default: --dataset's qrels)."),
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option("--runs", help="TREC run files (globs) to order by nDCG@10 under both labels."),
    ] = None,
    output: JudgmentsOutOpt = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help=f"{', '.join(JUDGMENT_FORMATS)} (default trec).")
    ] = None,
    *,
    conn: ConnectionSettings,
) -> None:
    """Judgments per (query, document) from a UBI click log: clicks over the clicks expected at the ranks shown."""
    spec = _built(
        ClickModelSpec,
        model=click_model,
        max_rank=max_rank,
        min_impressions=min_impressions,
        cuts=_cuts(cuts),
        start=_date(start, "--start"),
        end=_date(end, "--end"),
    )
    log = read_log(_source(events, queries, events_index, queries_index), spec, conn)
    for note in log.notes:
        console.print(f"{log.source}: {note}", highlight=False)
    data = _dataset(dataset)
    judged, ids = from_log(log, spec, data.queries if data else None)
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


@with_panels(
    {
        "Log": ["events", "queries", "events_index", "queries_index", "start", "end"],
        "Sample": ["method", "size", "seed", "dataset"],
        "Output": ["output"],
    }
)
@with_connection
def queries_command(
    events: EventsOpt = None,
    queries: QueriesOpt = None,
    events_index: EventsIndexOpt = None,
    queries_index: QueriesIndexOpt = None,
    method: Annotated[
        str | None,
        typer.Option(
            "--method", help=f"{' | '.join(SAMPLE_METHODS)} (default {default_of(QuerySetSpec, 'method')})."
        ),
    ] = None,
    size: Annotated[
        int | None,
        typer.Option(
            "--size", min=1, help=f"Queries to sample (default {default_of(QuerySetSpec, 'size')})."
        ),
    ] = None,
    seed: SeedOpt = None,
    start: StartOpt = None,
    end: EndOpt = None,
    dataset: DatasetOpt = None,
    output: QuerySetOutOpt = None,
    *,
    conn: ConnectionSettings,
) -> None:
    """A query set from a UBI log: random, probability proportional to frequency (pps), or the top N."""
    spec = _built(ClickModelSpec, start=_date(start, "--start"), end=_date(end, "--end"))
    log = read_log(_source(events, queries, events_index, queries_index), spec, conn)
    frequencies = query_frequencies(log, spec.event_filter())
    data = _dataset(dataset)
    chosen = sample_queries(
        frequencies,
        _built(QuerySetSpec, method=method, size=size, seed=seed),
        query_ids(frequencies, data.queries if data else None),
    )
    for line in query_set_lines(chosen):
        console.print(line, highlight=False)
    if output is not None:
        write_jsonl_atomic(
            output, ({"_id": q.qid, "text": q.text, "frequency": q.frequency} for q in chosen.queries)
        )
        console.print(f"wrote {output}", highlight=False)


@with_panels(
    {
        "Simulation": ["dataset", "searches", "seed", "impressions"],
        "Output": ["output", "to_index", "events_index", "queries_index"],
    }
)
@with_connection
def simulate_command(
    output: LogOutOpt = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Judged dataset to simulate (default sample).")
    ] = None,
    searches: Annotated[
        int | None,
        typer.Option(
            "--searches",
            min=1,
            help=f"Searches to simulate (default {default_of(SimulationSpec, 'searches')}).",
        ),
    ] = None,
    seed: SeedOpt = None,
    impressions: Annotated[
        str | None,
        typer.Option(
            "--impressions", help=f"{' | '.join(IMPRESSION_MODES)}: impression events, or hit ids only."
        ),
    ] = None,
    to_index: Annotated[
        bool, typer.Option("--index", help="Also index the log into the cluster's UBI indices.")
    ] = False,
    events_index: EventsIndexOpt = None,
    queries_index: QueriesIndexOpt = None,
    *,
    conn: ConnectionSettings,
) -> None:
    """A seeded UBI log of a judged dataset's queries, clicked by a position-based click model."""
    if output is None:
        raise ConfigError("--output: expected a folder to write the simulated log to, found none")
    data = load_dataset(dataset or "sample")
    spec = _built(SimulationSpec, searches=searches, seed=seed, impressions=impressions)
    sim = simulate(data.queries, data.qrels, [d.id for d in data.iter_corpus()], spec)
    written = write_simulation(output, sim)
    console.print(
        f"{sim.log.source}: {len(sim.log.events)} events over {len(sim.rankings)} queries of {data.name} "
        f"→ {', '.join(str(p) for p in written[:2])}, {len(written) - 2} systems' runs in {written[2].parent}",
        highlight=False,
    )
    if to_index:
        names = {
            "events_index": events_index or EVENTS_INDEX,
            "queries_index": queries_index or QUERIES_INDEX,
        }
        backend = connect(conn)
        try:
            counts = index_ubi(backend, sim.log, **names)
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
