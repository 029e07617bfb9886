"""A credential that never prints itself: connection passwords, API keys, endpoint keys."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Secret:
    """A credential that never prints itself."""

    _value: str = field(repr=False)

    def reveal(self) -> str:
        return self._value

    def __str__(self) -> str:
        return "***"

    def __repr__(self) -> str:
        return "Secret('***')"
