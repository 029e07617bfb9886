"""Record sinks: where evaluation records go.

``SINKS`` maps a sink name to its class: ``es`` (an Elasticsearch cluster, the searched
one or another; takes an ``elasticsearch.Elasticsearch``) and ``jsonl`` (a file). Every
sink writes idempotently per (run, dataset, arm, query).
"""

from __future__ import annotations

from harness.sinks._base import RecordSink
from harness.sinks._es import ALIAS, DEFAULT_INDEX, TEMPLATE_NAME, EsSink, index_template
from harness.sinks._jsonl import JsonlSink

SINKS: dict[str, type[EsSink] | type[JsonlSink]] = {"es": EsSink, "jsonl": JsonlSink}

__all__ = [
    "ALIAS",
    "DEFAULT_INDEX",
    "SINKS",
    "TEMPLATE_NAME",
    "EsSink",
    "JsonlSink",
    "RecordSink",
    "index_template",
]
