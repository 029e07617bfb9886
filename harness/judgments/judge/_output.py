"""What ``harness judge`` writes, and the provenance that travels with the labels.

Under ``OUT/<dataset>/``:

* ``answers.jsonl``: one line per judged pair: the combined label, the human grade (if any), whether
  the document was truncated, and each judge's answer text with the label it gave or why it gave none;
* ``judgments.qrels``: the combined labels as TREC qrels (``QUERY_ID 0 DOC_ID LABEL``), the file
  ``harness rescore --qrels`` takes (beside the human judgments with ``--mode fill`` or ``merge``,
  instead of them with ``--mode replace``);
* ``judgments.qrels.judge.json``: the labels' provenance (:class:`~harness.results.JudgeProvenance`:
  judge ids = model + prompt hash + scale, how they were combined, the date, the agreement measured)
  and the sha256 of ``judgments.qrels``. Whoever reads the qrels file finds the provenance beside it
  (:func:`harness.results.load_provenance`); a qrels file changed after judging no longer matches it, and is refused.

The sidecar is written last: a folder without it holds no finished judging.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from base import ConfigError, slug, write_json_atomic, write_jsonl_atomic, write_text_atomic
from harness.judgments.judge._client import describe_endpoint
from harness.judgments.judge._judge import JudgedPair, JudgeRun
from harness.results import SIDECAR_SCHEMA, JudgeAgreement, JudgeProvenance, sidecar_path
from harness.results._codec import encode
from indexer import __version__

ANSWERS_FILE = "answers.jsonl"
QRELS_FILE = "judgments.qrels"


def provenance(run: JudgeRun, agreement: JudgeAgreement | None) -> JudgeProvenance:
    spec = run.spec
    return JudgeProvenance(
        id=spec.id,
        judges=tuple(j.identity(spec.settings) for j in spec.judges),
        combine=spec.combine,
        created=run.created,
        dataset=run.pairs.dataset.name,
        pairs=len(run.judged),
        labelled=len(run.judged) - run.unlabelled,
        parse_failures=run.parse_failures(),
        agreement=agreement,
    )


def _answer(j: JudgedPair, run: JudgeRun) -> dict[str, Any]:
    human = run.pairs.dataset.qrels.get(j.pair.qid, {}).get(j.pair.doc_id)
    return {
        "query_id": j.pair.qid,
        "doc_id": j.pair.doc_id,
        "label": j.label,
        "human": human,
        "truncated": j.truncated,
        "judges": [
            {"judge": v.judge, "label": v.label, "problem": v.problem, "answer": v.answer} for v in j.verdicts
        ],
    }


def qrels_text(run: JudgeRun) -> str:
    labels = run.labels
    return "".join(f"{q} 0 {d} {labels[q][d]}\n" for q in sorted(labels) for d in sorted(labels[q]))


def _sidecar(run: JudgeRun, prov: JudgeProvenance, qrels_sha256: str) -> dict[str, Any]:
    spec = run.spec
    return {
        "schema": SIDECAR_SCHEMA,
        "harness_version": __version__,
        "qrels_sha256": qrels_sha256,
        "provenance": encode(prov),
        "pairs_source": run.pairs.source,
        "endpoint": describe_endpoint(spec.endpoint),
        "context": encode(spec.context),
        "skipped": [f"{p.qid} {p.doc_id}" for p in run.skipped],
        "this_run": {jid: s.to_dict() for jid, s in run.stats.items()},
    }


def judgments_folder(out: Path, dataset: str) -> Path:
    return Path(out) / slug(dataset)


def write_judgments(run: JudgeRun, prov: JudgeProvenance, out: Path) -> Path:
    """The three files under ``out/<dataset>/``; returns the qrels file's path."""
    folder = judgments_folder(out, run.pairs.dataset.name)
    if not run.labels:
        raise ConfigError(
            f"no pair got a label on the {run.spec.scale.name} scale ({run.parse_failures()} answers did not parse): "
            f"nothing to write; see the answers' problems (e.g. {_first_problem(run)})"
        )
    write_jsonl_atomic(folder / ANSWERS_FILE, (_answer(j, run) for j in run.judged))
    text = qrels_text(run)
    qrels = folder / QRELS_FILE
    write_text_atomic(qrels, text)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    write_json_atomic(sidecar_path(qrels), _sidecar(run, prov, digest))
    return qrels


def _first_problem(run: JudgeRun) -> str:
    return next((v.problem for j in run.judged for v in j.verdicts if v.problem), "none")
