"""How another source's judgments meet a dataset's own, and what the figures scored with them say.

One rule for ``harness rescore`` (a judgments file over a finished run) and for an experiment's
``[judgments]`` source (click logs before the search, an LLM judge after it): ``merge`` (the other
source's grade wins where both judge a pair), ``fill`` (the dataset's grade does: the other source only
adds pairs) or ``replace`` (the other source's judgments alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.results import JudgeProvenance, JudgmentsUsed

Qrels = dict[str, dict[str, int]]
#: how another source's judgments meet the dataset's: its grade wins (merge), the dataset's does (fill), or its alone
MODES = ("merge", "fill", "replace")
DEFAULT_MODE = "merge"
OWN = "the dataset's own judgments"

_MODE_TEXT = {
    "merge": "{own} merged with {other} (its grade wins where both judge a pair)",
    "fill": "{own}, with {other} where they judge nothing",
    "replace": "{other} alone",
}


@dataclass(frozen=True, slots=True)
class Merged:
    """The judgments to score with, and how many pairs the other source added and changed."""

    qrels: Qrels
    added: int
    changed: int


def merge_judgments(
    base: Mapping[str, Mapping[str, int]], extra: Mapping[str, Mapping[str, int]], mode: str
) -> Merged:
    """``extra`` applied to ``base`` as ``mode`` says (see the module doc)."""
    merged = {q: dict(d) for q, d in base.items()} if mode != "replace" else {}
    added = changed = 0
    for qid, docs in extra.items():
        for doc, grade in docs.items():
            before = base.get(qid, {}).get(doc)
            added += before is None
            if mode == "fill" and before is not None:
                continue
            changed += before is not None and before != grade
            merged.setdefault(qid, {})[doc] = grade
    return Merged(merged, added, changed)


def judgments_used(
    before: JudgmentsUsed | None, name: str, mode: str, judge: JudgeProvenance | None = None
) -> JudgmentsUsed:
    """What figures scored with ``name``'s judgments (applied as ``mode`` over ``before``, None: the dataset's
    own) say they were scored with; ``judge``: the LLM judge whose labels ``name`` holds."""
    own = before.label if before is not None else OWN
    other = f"{name}: labels of judge {judge.id}" if judge is not None else name
    kept = before.files if before is not None and mode != "replace" else ()
    if judge is None and mode != "replace" and before is not None:
        judge = before.judge  # labels of an earlier judge stay among the judgments
    label = _MODE_TEXT[mode].format(own=own, other=other)
    return JudgmentsUsed(label, mode, (*kept, name), judge)
