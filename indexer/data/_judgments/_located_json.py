"""JSON whose objects and arrays remember the line they start on, so errors can say ``file:line``."""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
from typing import Any


class LocatedDict(dict[str, Any]):
    """A JSON object and the line (from 1) of its opening brace."""

    line: int = 0


class LocatedList(list[Any]):
    """A JSON array and the line (from 1) of its opening bracket."""

    line: int = 0


def line_of(value: Any, default: int = 1) -> int:
    return int(getattr(value, "line", default) or default)


class _Decoder(json.JSONDecoder):
    def __init__(self, text: str) -> None:
        super().__init__()
        starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

        def line(pos: int) -> int:
            return bisect.bisect_right(starts, pos)

        def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
            value, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
            located = LocatedDict(value)
            located.line = line(s_and_end[1] - 1)
            return located, end

        def parse_array(s_and_end: tuple[str, int], scan_once: Any) -> tuple[Any, int]:
            value, end = json.decoder.JSONArray(s_and_end, scan_once)  # type: ignore[attr-defined]
            located = LocatedList(value)
            located.line = line(s_and_end[1] - 1)
            return located, end

        self.parse_object = parse_object
        self.parse_array = parse_array
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]


def loads(text: str) -> Any:
    """Parse ``text``; objects are :class:`LocatedDict`, arrays :class:`LocatedList` (``.line``)."""
    return _Decoder(text).decode(text)
