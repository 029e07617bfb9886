"""Reading a judgments file (the format given or recognised, validation, duplicates, a content hash) and
writing one in any format of the same registry."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from base import ConfigError, write_text_atomic
from indexer.data._judgments import _delimited, _ltr, _quepid, _rre, _trec
from indexer.data._judgments._format import JudgmentFormat
from indexer.data._judgments._model import Judgment, Judgments, RatedPair
from indexer.data._validate import DataFile, Problems

#: judgment file formats, in the order auto-detection tries them (the TSV/CSV reader last: it takes anything)
JUDGMENT_FORMATS: dict[str, JudgmentFormat] = {
    f.name: f for f in (_rre.FORMAT, _quepid.FORMAT, _ltr.FORMAT, _trec.FORMAT, _delimited.FORMAT)
}
_HEAD = 5


def _head(path: Path) -> list[str]:
    lines: list[str] = []
    with DataFile(path, path.name).open() as fh:
        for raw in fh:
            text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff").strip()
            if text and not text.startswith(
                "#"
            ):  # a comment line (trec_eval reads them) says nothing of the format
                lines.append(text)
            if len(lines) >= _HEAD:
                break
    return lines


def judgment_format(path: Path, name: str | None = None) -> JudgmentFormat:
    """The format called ``name``, or the first whose ``sniff`` recognises the file."""
    if name is not None:
        found = JUDGMENT_FORMATS.get(name.strip().lower())
        if found is None:
            raise ConfigError(
                f"expected a judgments format among {', '.join(JUDGMENT_FORMATS)}, found {name!r}"
            )
        return found
    head = _head(path)
    return next(f for f in JUDGMENT_FORMATS.values() if f.sniff(path, head))


def _deduplicate(items: list[Judgment], file: str, problems: Problems) -> list[Judgment]:
    seen: dict[tuple[str, str], Judgment] = {}
    for j in items:
        key = (j.query, j.doc_id)
        first = seen.get(key)
        if first is None:
            seen[key] = j
        elif first.grade != j.grade:
            problems.error(
                "conflicting-judgment",
                file,
                j.line,
                f'expected one grade per (query, document), found ("{j.query[:60]}", "{j.doc_id}") graded '
                f"{j.grade} here and {first.grade} at line {first.line}",
            )
    return list(seen.values())


def read_judgments(path: Path | str, format: str | None = None) -> Judgments:
    """Read and validate a judgments file (TREC qrels, TSV/CSV, Quepid CSV or RRE JSON).

    The format is recognised from the file unless ``format`` names it. Every problem is
    reported at ``file:line`` in one :class:`DataError`; nothing partial is returned.
    """
    file_path = Path(path).expanduser()
    if not file_path.is_file():
        raise ConfigError(f"expected a judgments file, found no file at {file_path}")
    fmt = judgment_format(file_path, format)
    problems = Problems()
    file = DataFile(file_path, str(file_path))
    rows = list(fmt.read(file, problems))
    items = _deduplicate([r for r in rows if r is not None], file.name, problems)
    if not items and not problems.errors:
        waiting = sum(r is None for r in rows)
        found = f"{waiting} rows without a grade yet (a pool not judged yet?)" if waiting else "none"
        problems.error(
            "no-judgments",
            file.name,
            None,
            f"expected at least one graded judgment ({fmt.description}), found {found}",
        )
    problems.raise_if_errors(f"judgments {file_path} ({fmt.name} format)")
    digest = hashlib.sha256(file_path.read_bytes()).hexdigest()
    return Judgments(str(file_path), fmt.name, tuple(items), sum(r is None for r in rows), digest)


def write_judgments(path: Path | str, pairs: Sequence[RatedPair], format: str) -> Path:
    """Write ``pairs`` to ``path`` in the format called ``format`` (atomically); the path written.

    A format that names queries by text (quepid, rre) needs every pair's text, one that names them
    by id (trec, tsv, ltr) its id: a :class:`ConfigError` says which pair lacks it.
    """
    fmt = judgment_format(Path(path), format)
    if not pairs:
        raise ConfigError(f"expected judgments to write to {path}, found none")
    target = Path(path).expanduser()
    write_text_atomic(target, fmt.render(pairs))
    return target
