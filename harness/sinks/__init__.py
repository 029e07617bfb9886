"""Record sinks: where evaluation records go, chosen by name through ``SINKS``.

``es`` writes to the cluster that takes records (the searched one, or ``--records-url``;
Elasticsearch or OpenSearch) for Kibana or OpenSearch Dashboards; ``jsonl`` writes ``records.jsonl`` in the run directory. Every sink writes
idempotently per (run, dataset, arm, query). A sink is built from a :class:`SinkTarget`.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.results import RECORDS_FILE
from harness.sinks._base import RecordSink, SinkTarget
from harness.sinks._es import ALIAS, DEFAULT_INDEX, TEMPLATE_NAME, EngineSink, index_template
from harness.sinks._jsonl import JsonlSink
from harness.sinks._metrics import (
    METRIC_SINKS,
    METRICS_ALIAS,
    METRICS_INDEX,
    METRICS_TEMPLATE,
    EngineMetricSink,
    JsonlMetricSink,
    MetricSink,
    MetricTarget,
    metrics_template,
)

SINKS: dict[str, Callable[[SinkTarget], RecordSink]] = {
    "jsonl": lambda target: JsonlSink(target.run_dir / RECORDS_FILE),
    "es": lambda target: EngineSink(target.backend),
}

__all__ = [
    "ALIAS",
    "DEFAULT_INDEX",
    "METRICS_ALIAS",
    "METRICS_INDEX",
    "METRICS_TEMPLATE",
    "METRIC_SINKS",
    "SINKS",
    "TEMPLATE_NAME",
    "EngineMetricSink",
    "EngineSink",
    "JsonlMetricSink",
    "JsonlSink",
    "MetricSink",
    "MetricTarget",
    "RecordSink",
    "SinkTarget",
    "index_template",
    "metrics_template",
]
