"""results.json version 2 renamed the relevance pass's ``latency_ms`` to ``batch_ms``: version 1 files
(and records.jsonl lines) written before that still load through the typed model."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema

from harness.results import SCHEMA_VERSION, EvalRecord, RunResults, schema
from tests.harness.inspect.synthetic import make_dataset, records_for, synthetic_results


def _as_v1(data: dict[str, Any]) -> dict[str, Any]:
    old = copy.deepcopy(data)
    old["schema_version"] = 1
    for ds in old["datasets"].values():
        ds.pop("ann_sweep", None)
        for arm in ds["arms"].values():
            arm["latency_ms"] = arm.pop("batch_ms")
            arm.pop("load", None)
            arm.pop("ann", None)
    return old


def test_a_version_1_results_file_still_loads() -> None:
    results = synthetic_results({"d": make_dataset("d", 1)})
    current = results.to_json()
    assert current["schema_version"] == SCHEMA_VERSION == 2
    jsonschema.Draft202012Validator(schema()).validate(current)
    loaded = RunResults.from_json(_as_v1(current))
    assert loaded.schema_version == SCHEMA_VERSION
    for name, arm in loaded.datasets["d"].arms.items():
        assert arm.batch_ms == results.datasets["d"].arms[name].batch_ms
        assert arm.load is None and arm.ann is None
    assert json.loads(json.dumps(loaded.to_json()))["datasets"]["d"]["arms"]["lexical"]["batch_ms"]


def test_a_record_line_with_latency_ms_still_loads() -> None:
    [record, *_] = records_for(make_dataset("d", 2))
    line = record.to_json()
    line["latency_ms"] = line.pop("batch_ms")
    assert EvalRecord.from_json(line).batch_ms == record.batch_ms
