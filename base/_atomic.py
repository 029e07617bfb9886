"""Atomic file writes: a reader sees the old file or the new one, never half of either.

Every file the product writes for users (run directories, records, reports, expansion
files) goes through :func:`atomic_write`: the content is written to a temporary file
in the same folder, flushed, then renamed over the target. A crash or Ctrl-C mid-write
leaves the previous file (or none) and no temporary file behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from base._phases import phase


@contextmanager
def atomic_write(path: Path | str, *, encoding: str = "utf-8") -> Iterator[TextIO]:
    """Open ``path`` for writing text; the file appears (renamed into place) only if the block succeeds."""
    with phase("write"), _atomic_write(Path(path), encoding) as fh:
        yield fh


@contextmanager
def _atomic_write(target: Path, encoding: str) -> Iterator[TextIO]:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide results from the rest of the team
    try:
        with os.fdopen(fd, "w", encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_write(path) as fh:
        fh.write(text)


def write_json_atomic(path: Path | str, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    with atomic_write(path) as fh:
        json.dump(data, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


def write_jsonl_atomic(
    path: Path | str, rows: Iterable[Mapping[str, Any]], *, sort_keys: bool = False
) -> int:
    """Write one JSON object per line, atomically; returns the number of lines."""
    count = 0
    with atomic_write(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=sort_keys) + "\n")
            count += 1
    return count


def read_json(path: Path | str) -> Any:
    """A JSON file's content (the counterpart of :func:`write_json_atomic`)."""
    with Path(path).open(encoding="utf-8") as fh:
        return json.load(fh)
