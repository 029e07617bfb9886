"""``assert_no_secret``: prove a credential appears nowhere in text, files or whole folders.

Reused for run directories, logs, evaluation records and reports. Besides the
raw secret it looks for the forms a leak usually takes: base64 of the secret
and, for basic auth, the ``Authorization`` header's ``base64(user:password)``.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable
from pathlib import Path

from base import Secret

Scannable = str | bytes | Path


def secret_forms(secret: str | Secret, username: str | None = None) -> list[bytes]:
    """The byte strings whose presence means ``secret`` leaked."""
    raw = secret.reveal() if isinstance(secret, Secret) else secret
    if len(raw) < 4:
        raise ValueError(f"a secret to search for must have at least 4 characters, found {len(raw)}")
    forms = [raw.encode(), base64.b64encode(raw.encode())]
    if username is not None:
        forms.append(base64.b64encode(f"{username}:{raw}".encode()))
    return forms


def _files(path: Path) -> Iterable[Path]:
    if path.is_file():
        yield path
        return
    for root, _dirs, names in os.walk(path):
        for name in names:
            candidate = Path(root) / name
            if candidate.is_file() and not candidate.is_symlink():
                yield candidate


def find_secret(
    where: Scannable | Iterable[Scannable], secret: str | Secret, username: str | None = None
) -> list[str]:
    """Where ``secret`` (or one of its forms) occurs: ``"<text #i>"`` or file paths; empty when nowhere."""
    forms = secret_forms(secret, username)
    items: list[Scannable] = [where] if isinstance(where, str | bytes | Path) else list(where)
    found: list[str] = []
    for i, item in enumerate(items):
        if isinstance(item, Path):
            if not item.exists():
                raise FileNotFoundError(f"nothing to scan at {item}")
            for file in _files(item):
                data = file.read_bytes()
                if any(form in data for form in forms):
                    found.append(str(file))
        else:
            data = item.encode() if isinstance(item, str) else item
            if any(form in data for form in forms):
                found.append(f"<text #{i}>")
    return found


def assert_no_secret(
    where: Scannable | Iterable[Scannable], secret: str | Secret, username: str | None = None
) -> int:
    """Fail when ``secret`` occurs in any string/bytes or any file under any path; returns how many files were read."""
    leaks = find_secret(where, secret, username)
    assert not leaks, f"secret leaked into: {', '.join(leaks)}"
    items: list[Scannable] = [where] if isinstance(where, str | bytes | Path) else list(where)
    return sum(sum(1 for _ in _files(p)) for p in items if isinstance(p, Path))
