"""TREC run files, written and read in one place: a run directory's ``runs/<dataset>/<arm>.trec``, and any
run file ``harness score`` is given.

Lines are ``QUERY_ID Q0 DOC_ID RANK SCORE TAG``. Read as trec_eval reads them: a line whose first
non-blank character is ``#`` is a comment, blank lines are skipped, text after the sixth column is
ignored, the rank column is ignored, and each query's results are ranked by score descending, then doc
id descending (:func:`harness.eval.rank`). Written in that same order with each score as Python's
shortest text that reads back as the same float, so that trec_eval ranks a file the harness wrote
exactly as the harness ranked and scored it (scores cut to 6 decimals tie where the run did not).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from base import slug
from harness._errors import RunError
from harness.eval import Run, rank, sort_run

RUNS_FOLDER = "runs"

#: one query's documents, best first
Ranking = dict[str, list[str]]
SHOWN = 80


def trec_path(run_dir: Path, dataset: str, arm: str) -> Path:
    """Where a run directory keeps the TREC run of ``arm`` on ``dataset``."""
    return Path(run_dir) / RUNS_FOLDER / slug(dataset) / f"{arm}.trec"


def trec_lines(run: Mapping[str, Mapping[str, float]], tag: str) -> Iterator[str]:
    """The run's lines: queries in id order, each ranked as trec_eval ranks it, scores that read back exact."""
    for qid, ranked in sort_run(run).items():
        for position, (doc_id, score) in enumerate(ranked.items(), start=1):
            yield f"{qid} Q0 {doc_id} {position} {float(score)!r} {tag}\n"


def _line(path: Path, lineno: int, text: str) -> tuple[str, str, float] | None:
    """(query id, doc id, score) of one line; ``None`` for a comment or a blank line."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    fields = stripped.split()
    if len(fields) < 6:
        raise RunError(
            f"{path}:{lineno}: expected 'QUERY_ID Q0 DOC_ID RANK SCORE TAG' (6 columns or more), "
            f"found {len(fields)}: {stripped[:SHOWN]!r}"
        )
    try:
        score = float(fields[4])
    except ValueError:
        raise RunError(
            f"{path}:{lineno}: expected a number in the score column, found {fields[4][:SHOWN]!r}"
        ) from None
    if score != score:
        raise RunError(f"{path}:{lineno}: expected a number in the score column, found {fields[4]!r}")
    return fields[0], fields[2], score


def read_run(path: Path | str) -> Run:
    """A TREC run file as ``{qid: {doc_id: score}}``, read as trec_eval reads it (see the module doc); a
    malformed line, or a document twice in one query (trec_eval refuses both), is an error at ``file:line``."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise RunError(f"expected a TREC run file at {file}, found none")
    run: Run = {}
    seen: dict[tuple[str, str], int] = {}
    with file.open(encoding="utf-8", errors="replace") as fh:
        for lineno, text in enumerate(fh, 1):
            parsed = _line(file, lineno, text.removeprefix("\ufeff") if lineno == 1 else text)
            if parsed is None:
                continue
            qid, doc_id, score = parsed
            first = seen.setdefault((qid, doc_id), lineno)
            if first != lineno:
                raise RunError(
                    f"{file}:{lineno}: expected each document once per query, found {doc_id} again for "
                    f"query {qid} (first at line {first})"
                )
            run.setdefault(qid, {})[doc_id] = score
    if not run:
        raise RunError(
            f"{file}: expected at least one run line (QUERY_ID Q0 DOC_ID RANK SCORE TAG), found none"
        )
    return run


def load_ranking(path: Path) -> Ranking:
    """Each query's document ids in trec_eval's order; a malformed line is an error naming ``file:line``."""
    if not path.is_file():
        raise RunError(
            f"expected a TREC run file at {path}, found none (was the run directory moved or cut?)"
        )
    return {qid: [doc for doc, _ in rank(results, qid)] for qid, results in read_run(path).items()}


def rank_run(ranking: Ranking) -> dict[str, dict[str, float]]:
    """Rank-derived scores (n, n-1, ..., 1): the file's order, with no tie for any scorer to break."""
    return {qid: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for qid, docs in ranking.items()}
