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

SINKS: dict[str, Callable[[SinkTarget], RecordSink]] = {
    "jsonl": lambda target: JsonlSink(target.run_dir / RECORDS_FILE),
    "es": lambda target: EngineSink(target.backend),
}

__all__ = [
    "ALIAS",
    "DEFAULT_INDEX",
    "SINKS",
    "TEMPLATE_NAME",
    "EngineSink",
    "JsonlSink",
    "RecordSink",
    "SinkTarget",
    "index_template",
]
