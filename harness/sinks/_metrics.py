"""Metric sinks: load samples and sweep points into ``metrics.jsonl`` or the engine (``harness-metrics``).

The engine sink goes through the :class:`~indexer.Backend`, so it writes to Elasticsearch or
OpenSearch alike: it installs the composable template (``resources/templates/harness-metrics.json``;
the same body is valid on both engines), then bulk-writes with each record's deterministic id into
``harness-metrics-v1`` (aliased ``harness-metrics`` for Kibana / OpenSearch Dashboards).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from base import BulkIndexError, write_jsonl_atomic
from harness._errors import RunError
from harness.results import METRICS_FILE, MetricRecord, metric_from_json
from indexer import Backend

METRICS_TEMPLATE = "harness-metrics"
METRICS_INDEX = "harness-metrics-v1"
METRICS_ALIAS = "harness-metrics"
BULK_RECORDS = 1000


def metrics_template() -> dict[str, Any]:
    text = resources.files("harness").joinpath("resources/templates/harness-metrics.json").read_text("utf-8")
    body: dict[str, Any] = json.loads(text)
    return body


class MetricSink(Protocol):
    def write(self, records: Sequence[MetricRecord]) -> int: ...


@dataclass(frozen=True, slots=True)
class MetricTarget:
    run_dir: Path
    backend: Backend | None  # the cluster that takes records (None: no engine sink possible)


class JsonlMetricSink:
    """``metrics.jsonl`` in the run directory; a record with the same id replaces the old one."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, records: Sequence[MetricRecord]) -> int:
        kept: dict[str, MetricRecord] = {}
        if self.path.is_file():
            for lineno, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
                if line.strip():
                    old = metric_from_json(json.loads(line), f"{self.path}:{lineno}")
                    kept[old.id] = old
        kept.update((r.id, r) for r in records)
        write_jsonl_atomic(self.path, (r.to_json() for r in kept.values()), sort_keys=True)
        return len(records)


class EngineMetricSink:
    """Bulk-writes records into ``index`` through ``backend`` (template installed first); refreshes after."""

    def __init__(self, backend: Backend, index: str = METRICS_INDEX) -> None:
        self.backend, self.index = backend, index

    def write(self, records: Sequence[MetricRecord]) -> int:
        self.backend.put_index_template(METRICS_TEMPLATE, metrics_template())
        written = 0
        for start in range(0, len(records), BULK_RECORDS):
            chunk = records[start : start + BULK_RECORDS]
            result = self.backend.bulk(_payload(self.index, chunk), timeout_s=120)
            failed = result.failed
            written += len(chunk) - len(failed)
            if failed:
                first = failed[0]
                raise BulkIndexError(
                    f"{len(failed)} metric record(s) rejected by {self.index!r} ({written} written); first: "
                    f"id={first.doc_id} {first.error_type}: {first.reason}",
                    [{"_id": f.doc_id, "status": f.status, "error": f.reason} for f in failed],
                )
        if records:
            self.backend.refresh(self.index)
        return written


def _payload(index: str, records: Iterable[MetricRecord]) -> bytes:
    lines = []
    for r in records:
        lines.append(json.dumps({"index": {"_index": index, "_id": r.id}}))
        lines.append(json.dumps(r.to_json()))
    return ("\n".join(lines) + "\n").encode()


def _engine_sink(target: MetricTarget) -> MetricSink:
    if target.backend is None:
        raise RunError("the es record sink needs a cluster to write metrics to, found none")
    return EngineMetricSink(target.backend)


METRIC_SINKS: dict[str, Callable[[MetricTarget], MetricSink]] = {
    "jsonl": lambda target: JsonlMetricSink(target.run_dir / METRICS_FILE),
    "es": _engine_sink,
}
