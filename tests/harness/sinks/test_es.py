"""The ``es`` sink against both real engines: counts, round trip, idempotence, surfaced errors."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from base import BulkIndexError
from harness import RunError
from harness.results import EvalRecord
from harness.sinks import ALIAS, SINKS, EngineSink, SinkTarget, index_template
from indexer import Backend
from tests.harness.inspect.synthetic import ARMS, N_QUERIES, make_dataset, records_for


class _Broken:
    """A record whose JSON the engine must reject (a field of the wrong type, or one the template lacks)."""

    def __init__(self, record: EvalRecord, change: dict[str, Any]) -> None:
        self.id = record.id
        self._json = {**record.to_json(), **change}

    def to_json(self) -> dict[str, Any]:
        return self._json


@pytest.fixture
def index(backend: Backend) -> Iterator[str]:
    name = f"harness-eval-test-inspect-{uuid.uuid4().hex[:8]}"
    yield name
    backend.delete_index(name, missing_ok=True)


def _count(backend: Backend, index: str, run_id: str | None = None) -> int:
    return backend.count(index, {"term": {"run_id": run_id}} if run_id else None)


def test_records_count_round_trip_and_no_duplicates(backend: Backend, index: str) -> None:
    datasets = [make_dataset("Biology", seed=1), make_dataset("sample", seed=2)]
    records = [r for ds in datasets for r in records_for(ds)]
    with EngineSink(backend, index) as sink:
        assert sink.write(records) == len(records)
    assert _count(backend, index) == len(datasets) * N_QUERIES * len(ARMS)

    sample = records[:: len(records) // 7]
    stored = backend.get_sources(index, [r.id for r in sample], [])
    for record in sample:
        assert stored[record.id] == record.to_json() and EvalRecord.from_json(stored[record.id]) == record

    with EngineSink(backend, index) as sink:  # the same run again: overwritten, not duplicated
        sink.write(records)
        sink.write(records_for(datasets[0], run_id="another-run"))
    assert _count(backend, index) == (len(datasets) + 1) * N_QUERIES * len(ARMS)
    assert _count(backend, index, "another-run") == N_QUERIES * len(ARMS)
    assert index in backend.alias_targets(ALIAS)


def test_template_maps_every_record_field(backend: Backend, index: str) -> None:
    ds = make_dataset("Biology", seed=1)
    EngineSink(backend, index).write(records_for(ds))
    mapping = backend.get_mapping(index)
    template_props = index_template()["template"]["mappings"]["properties"]
    # dynamic is strict, so a field the template lacks would have failed the write; arm scores are the
    # one dynamic object, mapped as floats by the dynamic template
    assert mapping.dynamic == "strict" and backend.get_settings(index)["index"]["number_of_shards"] == "1"
    assert set(mapping.properties) == set(template_props)
    arms = mapping.properties["arms_ndcg_at_10"]["properties"]
    assert set(arms) == set(ARMS) and all(v["type"] == "float" for v in arms.values())


def test_rejected_records_are_reported_not_dropped(backend: Backend, index: str) -> None:
    ds = make_dataset("Biology", seed=1)
    records = records_for(ds)
    bad = [
        _Broken(records[0], {"metrics": {"ndcg_at_10": "not a number"}}),
        _Broken(records[1], {"surprise": 1}),
    ]
    with pytest.raises(BulkIndexError, match=r"2 evaluation record\(s\) rejected") as info:
        EngineSink(backend, index).write([*bad, *records[2:5]])  # type: ignore[list-item]
    assert len(info.value.errors) == 2
    assert all(e["status"] == 400 and e["error"]["type"] for e in info.value.errors)
    assert _count(backend, index) == 3


def test_index_name_must_match_the_template(backend: Backend) -> None:
    with pytest.raises(RunError, match=r"expected a name matching harness-eval-\*"):
        EngineSink(backend, "my-records")
    assert isinstance(SINKS["es"](SinkTarget(Path("."), backend)), EngineSink)
