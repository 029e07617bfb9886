"""The click-judgments pipeline in one call: read the log, run the model, name the queries.

This is what an experiment's ``[judgments]`` table (source = clicks) calls: ``from_log(source,
spec, conn, dataset_queries)`` gives the judgments, their query ids and, through :func:`rated`,
the pairs to write or to score with.
"""

from __future__ import annotations

from collections.abc import Mapping

from base import ConfigError
from indexer import ConnectionSettings, RatedPair, UbiLog, connect, read_ubi_files, read_ubi_index

from ._models import ClickJudgments, judge_clicks
from ._querysets import query_frequencies, query_ids
from ._spec import ClickModelSpec, UbiSource


def read_log(source: UbiSource, spec: ClickModelSpec, conn: ConnectionSettings | None = None) -> UbiLog:
    """The events ``spec`` reads (and every search) from ``source``; a cluster needs ``conn``."""
    keep = spec.event_filter()
    if not source.in_index:
        assert source.events is not None
        return read_ubi_files(source.events, source.queries, keep=keep)
    if conn is None:
        raise ConfigError(f"expected a connection to read the UBI index {source.events_in}, found none")
    backend = connect(conn)
    try:
        return read_ubi_index(
            backend, events_index=source.events_in, queries_index=source.queries_in, keep=keep
        )
    finally:
        backend.close()


def from_log(
    log: UbiLog, spec: ClickModelSpec, dataset_queries: Mapping[str, str] | None = None
) -> tuple[ClickJudgments, dict[str, str]]:
    """The click model's judgments of ``log`` and the query ids of their texts (a dataset's, else numbered)."""
    judgments = judge_clicks(log, spec)
    return judgments, query_ids(query_frequencies(log, spec.event_filter()), dataset_queries)


def rated(judgments: ClickJudgments, ids: Mapping[str, str], *, dataset: bool = False) -> list[RatedPair]:
    """Every judged pair, to write, in query-id order. Numbered from the log (``dataset`` False), a text
    without an id gets the next number, so nothing judged is lost; against a dataset's queries, a text that
    is none of them is left out (:func:`left_out` counts those, and the command says so)."""
    every = dict(ids)
    if not dataset:
        top = max((int(v) for v in ids.values() if v.isdigit()), default=0)
        for j in judgments.items:
            if j.query not in every:
                top += 1
                every[j.query] = str(top)
    pairs = [
        RatedPair(every[j.query], j.query, j.doc_id, j.grade) for j in judgments.items if j.query in every
    ]
    return sorted(pairs, key=lambda p: (int(p.qid) if p.qid.isdigit() else 1 << 62, p.qid, p.doc_id))


def left_out(judgments: ClickJudgments, pairs: list[RatedPair]) -> int:
    """Judged pairs not written (their text is none of the dataset's queries)."""
    return len(judgments.items) - len(pairs)
