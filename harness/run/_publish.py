"""Publish: write the run directory (``WRITERS``) and send the evaluation records (``SINKS``).

Every file is written atomically. ``results.json`` goes last but one and ``manifest.json``
(status ``complete``) last, so a directory whose manifest says complete is complete.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from base import write_json_atomic, write_jsonl_atomic, write_text_atomic
from harness.inspect import RecordContext, build_records, render_markdown
from harness.judgments import qrels_path, qrels_text
from harness.results import (
    OVERLAP_FILE,
    PER_QUERY_FILE,
    REPORT_FILE,
    EvalRecord,
    Manifest,
    PairScores,
    QueryScores,
    RunResults,
    trec_lines,
    trec_path,
)
from harness.run._assemble import arm_overlaps
from harness.run._outcome import DatasetOutcome
from harness.sinks import SINKS, SinkTarget
from indexer import Backend


@dataclass(frozen=True, slots=True)
class Publication:
    """What the writers see: the run directory, the typed results and what execution produced."""

    run_dir: Path
    results: RunResults
    outcomes: Sequence[DatasetOutcome]


def write_trec_files(pub: Publication) -> None:
    """``runs/<dataset>/<arm>.trec``: TREC run files (rank order, the run's own scores)."""
    for o in pub.outcomes:
        for arm, res in o.runs.items():
            path = trec_path(pub.run_dir, o.dataset.name, arm)
            write_text_atomic(path, "".join(trec_lines(res.run, f"r2med-{arm}")))


def write_judgments(pub: Publication) -> None:
    """``qrels/<dataset>.qrels``: the judgments a source made (click logs, a judge) as every arm was scored with
    them (so that ``harness pool``, ``judge`` and ``rescore`` read the run with them), and what the source
    keeps beside them (``.json``: a click model's counts and agreement)."""
    for o in pub.outcomes:
        if o.judged is None:
            continue
        path = qrels_path(pub.run_dir, o.dataset.name)
        write_text_atomic(path, qrels_text(o.scored.qrels))
        if o.judged.beside is not None:
            write_json_atomic(path.with_name(path.name + ".json"), dict(o.judged.beside))


def write_per_query(pub: Publication) -> None:
    """``per_query.jsonl``: every measure of every judged query in every arm."""
    rows = (
        QueryScores(
            o.dataset.name, arm, qid, {m: round(ev.per_query[m][qid], 6) for m in ev.per_query}
        ).to_json()
        for o in pub.outcomes
        for arm, ev in o.evaluations.items()
        for qid in ev.qids
    )
    write_jsonl_atomic(pub.run_dir / PER_QUERY_FILE, rows)


def write_overlap(pub: Publication) -> None:
    """``overlap.jsonl``: overlap@k and RBO_ext of every compared pair of arms on every query."""
    rows = (
        PairScores(
            o.dataset.name, s.arm_a, s.arm_b, q.qid, round(q.overlap, 6), round(q.rbo, 6), s.k, s.p
        ).to_json()
        for o in pub.outcomes
        for s, per_query in arm_overlaps(o)
        for q in per_query
    )
    write_jsonl_atomic(pub.run_dir / OVERLAP_FILE, rows)


def write_results(pub: Publication) -> None:
    pub.results.save(pub.run_dir)


def write_report(pub: Publication) -> None:
    write_text_atomic(pub.run_dir / REPORT_FILE, render_markdown(pub.results))


#: run-directory artifacts, in writing order
WRITERS: dict[str, Callable[[Publication], None]] = {
    "trec": write_trec_files,
    "judgments": write_judgments,
    "per_query": write_per_query,
    "overlap": write_overlap,
    "results": write_results,
    "report": write_report,
}


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    manifest.save(run_dir)


def doc_lookup(backend: Backend, index: str) -> Callable[[Sequence[str]], dict[str, tuple[str, str]]]:
    def lookup(ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        sources = backend.get_sources(index, ids, ["title", "text"])
        return {doc: (src.get("title", ""), src.get("text", "")) for doc, src in sources.items()}

    return lookup


def record_pair(outcome: DatasetOutcome) -> tuple[str, str]:
    """(baseline, compared) arms of the records: the first fused arm against its first input, if any."""
    fused = outcome.plan.fused_arms
    if fused:
        return fused[0].compare_to[0], fused[0].name
    first = outcome.plan.arms[0].name
    return first, first


def records_of(pub: Publication, outcome: DatasetOutcome, backend: Backend) -> Iterator[EvalRecord]:
    manifest = pub.results.manifest
    exp = outcome.plan.expansion
    baseline, compared = record_pair(outcome)
    return build_records(
        RecordContext(
            run_id=manifest.run_id,
            timestamp=manifest.finished or manifest.created,
            dataset=outcome.dataset.name,
            queries=outcome.dataset.queries,
            qrels=outcome.scored.qrels,
            runs={arm: res.run for arm, res in outcome.runs.items()},
            per_query={arm: ev.per_query for arm, ev in outcome.evaluations.items()},
            doc_lookup=doc_lookup(backend, outcome.index),
            batch_ms={arm: res.client_ms for arm, res in outcome.runs.items()},
            expansions=dict(exp.documents) if exp else None,
            reasoning=dict(exp.reasoning) if exp else None,
            baseline_arm=baseline,
            compare_arm=compared,
            fusion=str(outcome.fusion) if outcome.fusion else None,
            model=manifest.model.id if manifest.model else None,
            expanded_arms={a.name for a in outcome.plan.arms if a.expansion is not None},
        )
    )


def publish(pub: Publication, sinks: Sequence[str], backend: Backend, records_backend: Backend) -> None:
    """Write every artifact, send the records to each sink, then mark the manifest complete.

    Documents shown in the records are read from ``backend`` (the searched cluster); the ``es``
    sink writes to ``records_backend`` (the same cluster, or ``--records-url``).
    """
    for writer in WRITERS.values():
        writer(pub)
    opened = [SINKS[name](SinkTarget(pub.run_dir, records_backend)) for name in sinks]
    try:
        for outcome in pub.outcomes if opened else ():  # (no sink: no record is built, no document read)
            records = list(records_of(pub, outcome, backend))
            for sink in opened:
                sink.write(records)
    finally:
        for sink in opened:
            sink.close()
    write_manifest(pub.run_dir, pub.results.manifest)
