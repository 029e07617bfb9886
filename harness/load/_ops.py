"""Operations a load phase replays: one request per query, built before any clock starts.

:class:`SearchOperation` sends each query's body as one ``_search`` (the arm's own body, the
same the relevance pass sent inside its msearch batches). :class:`MultiSearchOperation` sends
the bodies of several arms for one query as one ``_msearch`` (how a client fetches the inputs
of a client-side fusion in one round trip). Both go through the :class:`~indexer.Backend`, so
either engine works; a failed request raises a :class:`~base.HarnessError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from base import RequestFailed
from indexer import Backend


class Operation(Protocol):
    """``len(op)`` distinct requests; ``op.send(i, timeout_s)`` sends request ``i`` and returns the
    engine's ``took`` (ms; the largest one for several searches); raises on any failure."""

    @property
    def name(self) -> str: ...

    def __len__(self) -> int: ...
    def query_id(self, i: int) -> str: ...
    def send(self, i: int, timeout_s: float) -> float: ...


@dataclass(frozen=True, slots=True)
class SearchOperation:
    """Each query's search body as one single search request.

    The bodies are encoded to JSON once, here, before any clock starts: a load generator's
    request is timed from the moment it is handed to the client, as Rally times it (its parameter
    source builds the body, the client sends it), so encoding the same body again on every
    request would be our overhead, not the engine's time.
    """

    backend: Backend
    index: str
    qids: tuple[str, ...]
    bodies: tuple[Mapping[str, Any], ...]
    name: str = "search"
    payloads: tuple[bytes, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        encoded = tuple(
            json.dumps(b, separators=(",", ":"), ensure_ascii=False).encode() for b in self.bodies
        )
        object.__setattr__(self, "payloads", encoded)

    def __len__(self) -> int:
        return len(self.bodies)

    def query_id(self, i: int) -> str:
        return self.qids[i]

    def send(self, i: int, timeout_s: float) -> float:
        return self.backend.search(self.index, self.payloads[i], timeout_s=timeout_s).took_ms


@dataclass(frozen=True, slots=True)
class MultiSearchOperation:
    """Each query's bodies (one per input arm) as one msearch request; any failed search fails it."""

    backend: Backend
    index: str
    qids: tuple[str, ...]
    bodies: tuple[Sequence[Mapping[str, Any]], ...]
    name: str = "msearch"

    def __len__(self) -> int:
        return len(self.bodies)

    def query_id(self, i: int) -> str:
        return self.qids[i]

    def send(self, i: int, timeout_s: float) -> float:
        answers = self.backend.msearch(self.index, self.bodies[i], timeout_s=timeout_s)
        for answer in answers:
            if answer.error is not None:
                raise RequestFailed(
                    f"a search of query {self.qids[i]} failed (HTTP {answer.status}): {answer.error}",
                    status=answer.status,
                )
        return max((a.took_ms for a in answers), default=0.0)
