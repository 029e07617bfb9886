"""What every record sink offers: write records, then close; and what a sink is built from."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from harness.results import EvalRecord
from indexer import Backend


@runtime_checkable
class RecordSink(Protocol):
    """A destination for evaluation records (see :func:`harness.inspect.build_records`)."""

    def write(self, records: Iterable[EvalRecord]) -> int:
        """Write the records (idempotently per run, dataset, arm and query); return how many were written."""
        ...

    def close(self) -> None:
        """Flush and release what the sink holds; records written are then visible to readers."""
        ...


@dataclass(frozen=True, slots=True)
class SinkTarget:
    """Where a run's records may go: its run directory, and the cluster that takes records."""

    run_dir: Path
    backend: Backend


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
