"""The TREC run files of a run directory: ``runs/<dataset>/<arm>.trec``, written and read in one place.

Lines are ``QUERY_ID Q0 DOC_ID RANK SCORE TAG``. Reading keeps the file's rank order (the
scores are rounded to 6 decimals on write, so they could tie where the run did not):
:func:`load_ranking` returns each query's document ids by rank, :func:`rank_run` turns that
into a run with strictly decreasing scores that every scorer ranks the same way.
"""

from __future__ import annotations

from pathlib import Path

from base import slug
from harness._errors import RunError

RUNS_FOLDER = "runs"

#: one query's documents, best first
Ranking = dict[str, list[str]]


def trec_path(run_dir: Path, dataset: str, arm: str) -> Path:
    """Where a run directory keeps the TREC run of ``arm`` on ``dataset``."""
    return Path(run_dir) / RUNS_FOLDER / slug(dataset) / f"{arm}.trec"


def load_ranking(path: Path) -> Ranking:
    """Each query's document ids in rank order; a malformed line is an error naming ``file:line``."""
    if not path.is_file():
        raise RunError(
            f"expected a TREC run file at {path}, found none (was the run directory moved or cut?)"
        )
    ranked: dict[str, list[tuple[int, str]]] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6 or not fields[3].isdigit():
                raise RunError(
                    f"{path}:{lineno}: expected 'QUERY_ID Q0 DOC_ID RANK SCORE TAG' with an integer rank, "
                    f"found {line.strip()[:80]!r}"
                )
            ranked.setdefault(fields[0], []).append((int(fields[3]), fields[2]))
    return {qid: [doc for _, doc in sorted(docs)] for qid, docs in ranked.items()}


def rank_run(ranking: Ranking) -> dict[str, dict[str, float]]:
    """Rank-derived scores (n, n-1, ..., 1): the file's order, with no tie for any scorer to break."""
    return {qid: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for qid, docs in ranking.items()}
