"""JSONL sink: round trip and idempotent re-writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import RunError
from harness.results import EvalRecord
from harness.sinks import SINKS, JsonlSink, RecordSink, SinkTarget
from tests.harness.inspect.synthetic import ARMS, N_QUERIES, make_dataset, records_for


def test_round_trip_and_rewrite_does_not_duplicate(tmp_path: Path) -> None:
    ds = make_dataset("Biology", seed=5)
    records = records_for(ds)
    path = tmp_path / "out" / "records.jsonl"
    with JsonlSink(path) as sink:
        assert isinstance(sink, RecordSink)
        assert sink.write(records) == N_QUERIES * len(ARMS)
    back = [EvalRecord.from_json(json.loads(line)) for line in path.read_text().splitlines()]
    assert sorted(back, key=lambda r: r.id) == sorted(records, key=lambda r: r.id)
    with JsonlSink(path) as sink:  # the same run again, plus another run
        sink.write(records)
        sink.write(records_for(ds, run_id="other-run"))
    lines = path.read_text().splitlines()
    assert len(lines) == 2 * N_QUERIES * len(ARMS)
    assert isinstance(SINKS["jsonl"](SinkTarget(tmp_path, None)), JsonlSink)  # type: ignore[arg-type]


def test_a_foreign_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"not": "a record"}\n')
    with pytest.raises(RunError, match=r"records.jsonl:1: expected a key '@timestamp', found keys \['not'\]"):
        JsonlSink(path)
