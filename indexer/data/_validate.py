"""Validation shared by every format: the problems found (at ``file:line``), the files, and the line
readers that locate what is wrong (text lines, JSON records, ids, texts, grades).

The cross-checks of a dataset folder and its assembly are :mod:`indexer.data._assemble`'s.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from base import DataError
from indexer.data._model import (
    Problem,
    Severity,
    summarise,
)

MAX_LISTED = 50
_SNIPPET = 60


def snippet(text: str) -> str:
    """A short, quoted excerpt of ``text`` for messages."""
    text = text.strip()
    return json.dumps(text if len(text) <= _SNIPPET else text[:_SNIPPET] + "...", ensure_ascii=False)


def json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number"}
    if value is None:
        return "null"
    if isinstance(value, float):
        return "a number"
    return names.get(type(value), type(value).__name__)


class Problems:
    """Collects problems while files are read."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def error(self, code: str, file: str, line: int | None, message: str) -> None:
        self.items.append(Problem(Severity.ERROR, code, file, line, message))

    def warning(self, code: str, file: str, line: int | None, message: str) -> None:
        self.items.append(Problem(Severity.WARNING, code, file, line, message))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity is Severity.WARNING]

    def raise_if_errors(self, what: str) -> None:
        errors = self.errors
        if not errors:
            return
        warnings = self.warnings
        lines = [str(p) for p in errors[:MAX_LISTED]]
        if len(errors) > MAX_LISTED:
            lines.append(f"... and {len(errors) - MAX_LISTED} more errors")
        if warnings:
            lines.append(f"also {len(warnings)} warning(s):")
            lines.extend(f"  {s}" for s in summarise(warnings))
        head = f"{what} failed validation: {len(errors)} error(s), {len(warnings)} warning(s)"
        raise DataError(head + "\n  " + "\n  ".join(lines), self.items)


@dataclass(frozen=True, slots=True)
class DataFile:
    """A file of a dataset; ``name`` is its path relative to the dataset root, as shown in problems."""

    path: Path
    name: str

    def open(self) -> IO[bytes]:
        if self.path.suffix == ".gz":
            return cast(IO[bytes], gzip.open(self.path, "rb"))
        return self.path.open("rb")

    def stamp(self) -> tuple[int, int]:
        st = self.path.stat()
        return st.st_size, st.st_mtime_ns


def find_file(root: Path, relative: str) -> DataFile | None:
    """``root/relative``, or its gzip-compressed twin ``relative.gz``."""
    for candidate in (relative, relative + ".gz"):
        path = root / candidate
        if path.is_file():
            return DataFile(path, candidate)
    return None


def require_file(root: Path, relatives: tuple[str, ...], problems: Problems) -> DataFile | None:
    """The first of ``relatives`` present under ``root``; otherwise a problem naming what was expected."""
    for relative in relatives:
        found = find_file(root, relative)
        if found is not None:
            return found
    present = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
    expected = " or ".join(relatives)
    problems.error(
        "missing-file",
        relatives[0],
        None,
        f"expected {expected} in {root}, found "
        + (("only " + ", ".join(present)) if present else "an empty or missing folder"),
    )
    return None


def text_lines(file: DataFile, problems: Problems) -> Iterator[tuple[int, str]]:
    """Non-blank lines decoded as UTF-8, numbered from 1; undecodable lines become problems."""
    records = 0
    lineno = 0
    try:
        with file.open() as fh:
            for lineno, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    records += 1
                    problems.error(
                        "undecodable-bytes",
                        file.name,
                        lineno,
                        f"expected UTF-8 text, found byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} "
                        "that is not valid UTF-8",
                    )
                    continue
                if lineno == 1:
                    line = line.removeprefix("\ufeff")
                if not line.strip():
                    problems.warning(
                        "blank-line", file.name, lineno, "expected one record per line, found a blank line"
                    )
                    continue
                records += 1
                yield lineno, line.rstrip("\r\n")
    except (OSError, EOFError, zlib.error) as exc:
        problems.error(
            "unreadable-file",
            file.name,
            lineno + 1,
            f"expected a readable file, found {type(exc).__name__}: {exc}",
        )
        return
    if records == 0:
        problems.error("empty-file", file.name, None, "expected at least one record, found an empty file")


def json_records(file: DataFile, problems: Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """JSON objects, one per line; malformed lines become problems."""
    for lineno, line in text_lines(file, problems):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.error(
                "malformed-json",
                file.name,
                lineno,
                f"expected one JSON object per line, found malformed JSON ({exc.msg} at column {exc.colno}): "
                + snippet(line),
            )
            continue
        if not isinstance(obj, dict):
            problems.error(
                "not-an-object",
                file.name,
                lineno,
                f"expected a JSON object, found {json_type(obj)}: {snippet(line)}",
            )
            continue
        yield lineno, obj


def get_id(obj: dict[str, Any], key: str, file: DataFile, line: int, problems: Problems) -> str | None:
    """A string id; a JSON integer is accepted with a warning, anything else is an error."""
    if key not in obj:
        problems.error(
            "missing-id",
            file.name,
            line,
            f'expected a string field "{key}", found no such field (fields: {", ".join(sorted(obj)) or "none"})',
        )
        return None
    value = obj[key]
    if isinstance(value, str):
        if not value.strip():
            problems.error(
                "empty-id", file.name, line, f'expected a non-empty "{key}", found {json.dumps(value)}'
            )
            return None
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        problems.warning(
            "numeric-id",
            file.name,
            line,
            f'expected a string "{key}", found the number {value}; read as "{value}"',
        )
        return str(value)
    problems.error(
        "bad-id",
        file.name,
        line,
        f'expected a string "{key}", found {json_type(value)}: {snippet(json.dumps(value))}',
    )
    return None


def get_text(
    obj: dict[str, Any], key: str, file: DataFile, line: int, problems: Problems, *, required: bool = True
) -> str | None:
    """A string field; missing optional fields read as ``""``."""
    if key not in obj:
        if not required:
            return ""
        problems.error(
            "missing-text",
            file.name,
            line,
            f'expected a string field "{key}", found no such field (fields: {", ".join(sorted(obj)) or "none"})',
        )
        return None
    value = obj[key]
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        problems.error(
            "bad-text",
            file.name,
            line,
            f'expected a string "{key}", found {json_type(value)}: {snippet(json.dumps(value))}',
        )
        return None
    return value


def json_grade(value: object, file: DataFile, line: int, problems: Problems) -> int | None:
    """A non-negative integer grade from a JSON value."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        problems.error(
            "bad-grade", file.name, line, f"expected a non-negative integer grade, found {json_type(value)}"
        )
        return None
    if isinstance(value, str):
        grade = text_grade(value, file, line, problems)
        if grade is not None:
            problems.warning(
                "string-grade",
                file.name,
                line,
                f"expected an integer grade, found the string {json.dumps(value)}",
            )
        return grade
    if isinstance(value, float):
        if not value.is_integer():
            problems.error(
                "non-integer-grade", file.name, line, f"expected a non-negative integer grade, found {value}"
            )
            return None
        problems.warning(
            "float-grade", file.name, line, f"expected an integer grade, found {value}; read as {int(value)}"
        )
    return _non_negative(int(value), file, line, problems)


def text_grade(value: str, file: DataFile, line: int, problems: Problems) -> int | None:
    """A non-negative integer grade from a TSV/TREC column."""
    try:
        grade = int(value.strip())
    except ValueError:
        problems.error(
            "non-integer-grade",
            file.name,
            line,
            f"expected a non-negative integer grade, found {json.dumps(value)}",
        )
        return None
    return _non_negative(grade, file, line, problems)


def _non_negative(grade: int, file: DataFile, line: int, problems: Problems) -> int | None:
    if grade < 0:
        problems.error(
            "negative-grade", file.name, line, f"expected a non-negative integer grade, found {grade}"
        )
        return None
    return grade
