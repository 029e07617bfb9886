"""Reading a run directory: ``results.json``, ``per_query.jsonl`` and ``records.jsonl``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from indexer import RunError

RESULTS = "results.json"
PER_QUERY = "per_query.jsonl"
RECORDS = "records.jsonl"


def load_results(run_dir: Path) -> dict[str, Any]:
    """``results.json`` of a run directory (``datasets`` and ``manifest``)."""
    path = Path(run_dir) / RESULTS
    if not path.is_file():
        raise RunError(f"{run_dir} is not a run directory: expected {RESULTS} in it, found none")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise RunError(f"{path} is not valid JSON") from exc
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), dict):
        raise RunError(f"{path}: expected an object with a 'datasets' object, found {type(data).__name__}")
    return data


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as exc:
                raise RunError(
                    f"{path}:{lineno}: expected one JSON object per line, found {line[:80]!r}"
                ) from exc


def load_records(run_dir: Path, *, required: bool = True) -> list[dict[str, Any]]:
    """The evaluation records of a run (``records.jsonl``); ``[]`` when absent and not ``required``."""
    path = Path(run_dir) / RECORDS
    if not path.is_file():
        if required:
            raise RunError(
                f"{run_dir} holds no {RECORDS}: expected the evaluation records the runner writes "
                "(run with the jsonl sink, or `harness run` writes it by default)"
            )
        return []
    return list(_jsonl(path))


def load_per_query(run_dir: Path) -> list[dict[str, Any]]:
    """``per_query.jsonl`` rows (dataset, arm, qid, metrics); ``[]`` when the file is absent."""
    path = Path(run_dir) / PER_QUERY
    return list(_jsonl(path)) if path.is_file() else []
