"""Elasticsearch sink: records into ``harness-eval-*`` indices through a composable index template.

Not a data stream: data streams are append-only, and writing a run again must replace
its records, so each record gets a deterministic ``_id`` (run, dataset, arm, query) and
goes to a plain index (``harness-eval-v1`` by default) that the template maps and
aliases as ``harness-eval`` for Kibana.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from importlib import resources
from typing import Any

from elasticsearch import ApiError, Elasticsearch, TransportError
from elasticsearch.helpers import streaming_bulk

from harness._errors import RunError
from harness.results import EvalRecord
from harness.sinks._base import SinkBase
from indexer import BulkIndexError, ConnectionFailed

TEMPLATE_NAME = "harness-eval"
DEFAULT_INDEX = "harness-eval-v1"
ALIAS = "harness-eval"


def index_template() -> dict[str, Any]:
    """The composable index template (``harness/resources/templates/harness-eval.json``)."""
    text = resources.files("harness").joinpath("resources/templates/harness-eval.json").read_text("utf-8")
    body: dict[str, Any] = json.loads(text)
    return body


class EsSink(SinkBase):
    """Bulk-writes records to ``index`` on ``client``; installs the template on first use.

    Every rejected document is reported in a :class:`~indexer.BulkIndexError` (none is
    dropped); the index is refreshed on :meth:`close` and after each :meth:`write`, so the
    records are searchable once the call returns.
    """

    def __init__(self, client: Elasticsearch, index: str = DEFAULT_INDEX, *, chunk_size: int = 500) -> None:
        patterns = index_template()["index_patterns"]
        if not any(_matches(index, p) for p in patterns):
            raise RunError(
                f"records index {index!r} is not covered by the template: expected a name matching "
                f"{' or '.join(patterns)}"
            )
        self.client = client
        self.index = index
        self.chunk_size = chunk_size
        self._template_installed = False

    def install_template(self) -> None:
        body = index_template()
        try:
            self.client.indices.put_index_template(name=TEMPLATE_NAME, **body)
            if self.client.indices.exists(index=self.index):
                # fields added to the template since the index was created (e.g. query.reasoning);
                # additive only, so existing records are untouched
                properties = body["template"]["mappings"]["properties"]
                self.client.indices.put_mapping(index=self.index, properties=properties)
        except (ApiError, TransportError) as exc:
            raise ConnectionFailed(f"could not install index template {TEMPLATE_NAME!r}") from exc
        self._template_installed = True

    def write(self, records: Iterable[EvalRecord]) -> int:
        if not self._template_installed:
            self.install_template()
        written = 0
        errors: list[dict[str, Any]] = []
        try:
            for ok, item in streaming_bulk(
                self.client,
                self._actions(records),
                chunk_size=self.chunk_size,
                raise_on_error=False,
                raise_on_exception=True,
                max_retries=3,
            ):
                if ok:
                    written += 1
                else:
                    errors.append(_describe(item))
        except (ApiError, TransportError) as exc:
            raise ConnectionFailed(f"bulk write of evaluation records to {self.index!r} failed") from exc
        self._refresh()
        if errors:
            first = errors[0]
            raise BulkIndexError(
                f"{len(errors)} evaluation record(s) rejected by {self.index!r} ({written} written); "
                f"first: id={first.get('_id')} {first.get('error')}",
                errors,
            )
        return written

    def close(self) -> None:
        if self._template_installed:
            self._refresh()

    def _actions(self, records: Iterable[EvalRecord]) -> Iterator[dict[str, Any]]:
        for record in records:
            yield {"_op_type": "index", "_index": self.index, "_id": record.id, "_source": record.to_json()}

    def _refresh(self) -> None:
        try:
            self.client.indices.refresh(index=self.index)
        except (ApiError, TransportError) as exc:
            raise ConnectionFailed(f"could not refresh {self.index!r}") from exc


def _matches(index: str, pattern: str) -> bool:
    from fnmatch import fnmatchcase

    return fnmatchcase(index, pattern)


def _describe(item: Mapping[str, Any]) -> dict[str, Any]:
    info = dict(next(iter(item.values()))) if item else {}
    return {"_id": info.get("_id"), "status": info.get("status"), "error": info.get("error")}
