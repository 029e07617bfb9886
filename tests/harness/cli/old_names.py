"""What the tests of the hidden old option names check: each used one prints exactly one line."""

from __future__ import annotations

from harness.cli._options import REMOVED_IN


def deprecated(err: str) -> list[str]:
    """The deprecation lines in a command's stderr."""
    return [line for line in err.splitlines() if line.startswith("deprecated:")]


def line(old: str, new: str) -> str:
    """The one line the old name ``old`` prints."""
    return f"deprecated: {old} is replaced by {new} (it goes in release {REMOVED_IN})"
