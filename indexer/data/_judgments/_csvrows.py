"""CSV/TSV rows with the line each starts on (quoted cells may span lines), decoded as UTF-8."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from indexer.data._validate import DataFile, Problems


def delimiter_of(first_line: str) -> str:
    return "\t" if "\t" in first_line else ","


def csv_rows(file: DataFile, problems: Problems, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Non-blank rows and the line each starts on; an unreadable file or bad bytes become problems."""
    try:
        with file.open() as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
            reader = csv.reader(text, delimiter=delimiter)
            start = 1
            for row in reader:
                if any(cell.strip() for cell in row):
                    yield start, row
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        problems.error("undecodable-bytes", file.name, None, f"expected UTF-8 text, found {exc.reason}")
    except csv.Error as exc:
        problems.error("malformed-csv", file.name, None, f"expected CSV, found {exc}")
    except OSError as exc:
        problems.error("unreadable-file", file.name, None, f"expected a readable file, found {exc}")


def first_row(file: DataFile, problems: Problems, delimiter: str) -> list[str]:
    for _, row in csv_rows(file, problems, delimiter):
        return row
    return []
