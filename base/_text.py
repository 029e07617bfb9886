"""Names made safe for index names, file names and HTML ids (one ``slug`` for every layer)."""

from __future__ import annotations

import re

from base._exceptions import ConfigError


def slug(name: str, *, fallback: str | None = None) -> str:
    """Lower-case letters, digits and dashes: for index names, file names and HTML ids.

    A name with none of those gives ``fallback``, or a :class:`ConfigError` without one.
    """
    out = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if not out:
        if fallback is not None:
            return fallback
        raise ConfigError(f"expected a name with letters or digits, found {name!r}")
    return out
