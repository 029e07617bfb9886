"""Capability probe: what the cluster we talk to can do.

Each backend has its own probe (:meth:`indexer.backends.Backend.probe`), both
answering with the same :class:`Capabilities`. ``probe(client)`` remains for
code that still holds an Elasticsearch client; it runs the Elasticsearch
backend's probe over that client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indexer.backends._types import Capabilities

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch


def probe(client: Elasticsearch) -> Capabilities:
    """Ask the Elasticsearch cluster behind ``client``; every check is read-only and creates nothing."""
    from indexer.backends._elasticsearch import ElasticsearchBackend

    return ElasticsearchBackend.from_client(client).probe()


__all__ = ["Capabilities", "probe"]
