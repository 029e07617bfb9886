"""The transport under both backends: one request at a time through the backend's own client.

:class:`RestTransport` holds the connection settings and what detection found (:class:`EngineInfo`:
product, version, serverless), and declares the one call each backend implements (``_call``: its client's
request, its exceptions translated to ours). The REST API written once over it is split by concern:
index administration (:mod:`._rest_admin`), documents and searches (:mod:`._rest_search`), the cluster
and the probe (:mod:`._rest`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar
from urllib.parse import quote

from indexer._connection import ConnectionSettings
from indexer.backends._types import Capabilities, EngineInfo


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def ndjson(lines: Iterable[Any]) -> bytes:
    return b"".join(dumps(line) + b"\n" for line in lines)


def segment(name: str) -> str:
    """A path segment: index names, aliases and patterns (commas and wildcards kept)."""
    return quote(name, safe=",*")


def query_params(**values: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            out[key] = ",".join(str(v) for v in value)
        else:
            out[key] = str(value)
    return out


class RestTransport(ABC):
    """The settings, what detection found, and the one request each backend implements."""

    product: ClassVar[str]
    display: ClassVar[str]

    def __init__(self, settings: ConnectionSettings, server: EngineInfo | None = None) -> None:
        self.settings = settings
        #: what detection found (None: a backend built directly, which asks the cluster when needed)
        self.server = server
        self._caps: Capabilities | None = None

    @property
    def url(self) -> str:
        return self.settings.url

    @property
    def serverless(self) -> bool:
        """A serverless project: only the service's APIs (no _nodes, no health, no shard settings)."""
        return self.server is not None and self.server.serverless

    @abstractmethod
    def _call(
        self,
        method: str,
        path: str,
        *,
        what: str,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        ndjson_body: bool = False,
        timeout_s: float | None = None,
        once: bool = False,
    ) -> Any:
        """One request; the parsed JSON answer. ``once``: no client-side retries. Raises our exceptions."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def probe(self) -> Capabilities: ...
