"""What every record sink offers: write records, then close."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable


@runtime_checkable
class RecordSink(Protocol):
    """A destination for evaluation records (see :func:`harness.inspect.build_records`)."""

    def write(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Write the records (idempotently per run, dataset, arm and query); return how many were written."""
        ...

    def close(self) -> None:
        """Flush and release what the sink holds; records written are then visible to readers."""
        ...


class SinkBase:
    """Context-manager plumbing shared by the sinks."""

    def close(self) -> None:  # pragma: no cover - overridden where something needs releasing
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
