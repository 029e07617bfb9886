"""The ``es`` sink: records into ``harness-eval-*`` indices of the cluster (Elasticsearch or OpenSearch).

Not a data stream: data streams are append-only, and writing a run again must replace
its records, so each record gets a deterministic ``_id`` (run, dataset, arm, query) and
goes to a plain index (``harness-eval-v1`` by default) that a composable index template
(``harness/resources/templates/harness-eval.json``) maps and aliases as ``harness-eval``
for Kibana or OpenSearch Dashboards. Both engines take the template as it is (the
composable-template API and every type it uses are common to them); records go through
the cluster's backend, in bulk requests paced by the shared :class:`~base.Retry`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from base import BulkIndexError, ConnectionFailed, HarnessError, RequestFailed, Retry
from harness._errors import RunError
from harness.results import EvalRecord
from harness.sinks._base import SinkBase
from indexer import Backend

TEMPLATE_NAME = "harness-eval"
DEFAULT_INDEX = "harness-eval-v1"
ALIAS = "harness-eval"


def index_template() -> dict[str, Any]:
    """The composable index template (``harness/resources/templates/harness-eval.json``)."""
    text = resources.files("harness").joinpath("resources/templates/harness-eval.json").read_text("utf-8")
    body: dict[str, Any] = json.loads(text)
    return body


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class EngineSink(SinkBase):
    """Bulk-writes records to ``index`` on ``backend``; installs the template on first use.

    Every rejected document is reported in a :class:`~base.BulkIndexError` (none is
    dropped); records rejected with 429/5xx, and whole requests that fail that way, are sent
    again with backoff. The index is refreshed after each :meth:`write` and on :meth:`close`,
    so the records are searchable once the call returns.
    """

    def __init__(
        self,
        backend: Backend,
        index: str = DEFAULT_INDEX,
        *,
        chunk_size: int = 500,
        retry: Retry | None = None,
    ) -> None:
        patterns = index_template()["index_patterns"]
        if not any(_matches(index, p) for p in patterns):
            raise RunError(
                f"records index {index!r} is not covered by the template: expected a name matching "
                f"{' or '.join(patterns)}"
            )
        self.backend = backend
        self.index = index
        self.chunk_size = chunk_size
        self.retry = retry or Retry(max_retries=3)
        self._template_installed = False

    def install_template(self) -> None:
        try:
            body = index_template()
            self.backend.put_index_template(TEMPLATE_NAME, body)
            if self.backend.index_exists(self.index):
                # fields added to the template since the index was created (e.g. query.reasoning);
                # additive only, so existing records are untouched
                self.backend.put_mapping(self.index, properties=body["template"]["mappings"]["properties"])
        except HarnessError as exc:
            raise ConnectionFailed(f"could not install index template {TEMPLATE_NAME!r}") from exc
        self._template_installed = True

    def write(self, records: Iterable[EvalRecord]) -> int:
        if not self._template_installed:
            self.install_template()
        written = 0
        errors: list[dict[str, Any]] = []
        chunk: list[EvalRecord] = []
        for record in records:
            chunk.append(record)
            if len(chunk) >= self.chunk_size:
                written += self._send(chunk, errors)
                chunk = []
        if chunk:
            written += self._send(chunk, errors)
        self._refresh()
        if errors:
            first = errors[0]
            raise BulkIndexError(
                f"{len(errors)} evaluation record(s) rejected by {self.index!r} ({written} written); "
                f"first: id={first.get('_id')} {first.get('error')}",
                errors,
            )
        return written

    def _send(self, chunk: list[EvalRecord], errors: list[dict[str, Any]]) -> int:
        """One bulk request per pending part of ``chunk``; returns the records written."""
        written = [0]

        def send(pending: list[EvalRecord], may_retry: bool) -> list[EvalRecord]:
            payload = b"".join(
                _dumps({"index": {"_index": self.index, "_id": r.id}}) + b"\n" + _dumps(r.to_json()) + b"\n"
                for r in pending
            )
            again = []
            for record, item in zip(pending, self.backend.bulk(payload).items, strict=True):
                if item.ok:
                    written[0] += 1
                elif item.status in RequestFailed.RETRYABLE_STATUS and may_retry:
                    again.append(record)
                else:
                    error = {"type": item.error_type, "reason": item.reason}
                    errors.append({"_id": item.doc_id, "status": item.status, "error": error})
            return again

        def give_up(exc: BaseException, retries: int) -> BaseException:
            return ConnectionFailed(
                f"bulk write of evaluation records to {self.index!r} failed after {retries} retries: {exc}"
            )

        self.retry.deliver(chunk, send, give_up=give_up)
        return written[0]

    def close(self) -> None:
        if self._template_installed:
            self._refresh()

    def _refresh(self) -> None:
        try:
            self.backend.refresh(self.index)
        except HarnessError as exc:
            raise ConnectionFailed(f"could not refresh {self.index!r}") from exc


def _matches(index: str, pattern: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase(index, pattern)
