"""User Behavior Insights logs: ``ubi_queries`` and ``ubi_events``, from JSON-lines exports or a cluster.

:func:`read_ubi_files` and :func:`read_ubi_index` give a :class:`UbiLog` (typed searches and
events; problems at ``file:line`` or index and document id); :func:`write_ubi_files` and
:func:`index_ubi` write one. :class:`EventFilter` says which events a click model reads (actions,
ranks, a date window), in the engine and on files alike. The fields read are listed in ``_model``.
"""

from indexer.data._ubi._files import read_ubi_files, write_ubi_files
from indexer.data._ubi._index import EVENTS_MAPPING, QUERIES_MAPPING, index_ubi, read_ubi_index
from indexer.data._ubi._model import (
    CLICK,
    EVENTS_INDEX,
    IMPRESSION,
    QUERIES_INDEX,
    EventFilter,
    UbiEvent,
    UbiLog,
    UbiQuery,
)

__all__ = [
    "CLICK",
    "EVENTS_INDEX",
    "EVENTS_MAPPING",
    "IMPRESSION",
    "QUERIES_INDEX",
    "QUERIES_MAPPING",
    "EventFilter",
    "UbiEvent",
    "UbiLog",
    "UbiQuery",
    "index_ubi",
    "read_ubi_files",
    "read_ubi_index",
    "write_ubi_files",
]
