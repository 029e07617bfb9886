"""Judgments in files, in and out: TREC qrels, TSV/CSV, Quepid's CSV, RRE's ratings JSON and the LTR
judgment list.

One module per format (``_trec``, ``_delimited``, ``_quepid``, ``_rre``, ``_ltr``), registered in
:data:`JUDGMENT_FORMATS`; :func:`read_judgments` recognises the format (or takes its name),
validates every line (problems at ``file:line``) and returns :class:`Judgments`, whose
:meth:`~Judgments.qrels` maps queries named by id or by text onto query ids.
:func:`write_judgments` writes :class:`RatedPair` s (query id and text, document, grade) in any
of them; :func:`rated_pairs` builds those from qrels and query texts.
"""

from indexer.data._judgments._format import JudgmentFormat
from indexer.data._judgments._model import (
    JudgedQrels,
    Judgment,
    Judgments,
    RatedPair,
    normalise_text,
    rated_pairs,
)
from indexer.data._judgments._registry import (
    JUDGMENT_FORMATS,
    judgment_format,
    read_judgments,
    write_judgments,
)

__all__ = [
    "JUDGMENT_FORMATS",
    "JudgedQrels",
    "Judgment",
    "JudgmentFormat",
    "Judgments",
    "RatedPair",
    "judgment_format",
    "normalise_text",
    "rated_pairs",
    "read_judgments",
    "write_judgments",
]
