"""Judgments from files: TREC qrels, TSV/CSV, Quepid's CSV export and RRE's ratings JSON.

One module per format (``_trec``, ``_delimited``, ``_quepid``, ``_rre``), registered in
:data:`JUDGMENT_FORMATS`; :func:`read_judgments` recognises the format (or takes its name),
validates every line (problems at ``file:line``) and returns :class:`Judgments`, whose
:meth:`~Judgments.qrels` maps queries named by id or by text onto query ids.
"""

from indexer.data._judgments._format import JudgmentFormat
from indexer.data._judgments._model import JudgedQrels, Judgment, Judgments, normalise_text
from indexer.data._judgments._registry import JUDGMENT_FORMATS, judgment_format, read_judgments

__all__ = [
    "JUDGMENT_FORMATS",
    "JudgedQrels",
    "Judgment",
    "JudgmentFormat",
    "Judgments",
    "judgment_format",
    "normalise_text",
    "read_judgments",
]
