"""One table model, drawn three ways: a terminal (or a log), Markdown, and HTML.

Builders (:mod:`harness.inspect._tables`) turn typed results into a :class:`Table`;
the three renderers here know nothing about results. The terminal renderer never
wraps a cell: outside a terminal (a CI log) it prints at the table's natural width,
and in a terminal narrower than the table it splits the columns into several tables
that each repeat the first column, so every row reads whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

SIG_MARK = "†"


@dataclass(frozen=True, slots=True)
class Cell:
    """A cell: its value, an aside (a CI, a system name), significance marks and a style."""

    text: str
    aside: str = ""
    marks: tuple[str, ...] = ()
    dim: bool = False

    def plain(self) -> str:
        out = self.text
        if self.aside:
            out += f" {self.aside}"
        if self.marks:
            out += f" {SIG_MARK}{','.join(self.marks)}"
        return out


@dataclass(frozen=True, slots=True)
class Column:
    header: str
    align: str = "right"  # "left" or "right"


@dataclass(frozen=True, slots=True)
class Table:
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    key: str = ""  # a stable id for HTML anchors and tests
    notes: tuple[str, ...] = field(default=())


# --------------------------------------------------------------------------- terminal


def _widths(table: Table) -> list[int]:
    return [
        max([len(col.header), *(len(row[i].plain()) for row in table.rows)])
        for i, col in enumerate(table.columns)
    ]


def _column_groups(widths: list[int], limit: int | None) -> list[list[int]]:
    """Column indexes per printed table: all at once, or chunks that fit ``limit`` with column 0 in each."""
    if limit is None or sum(w + 3 for w in widths) + 1 <= limit or len(widths) < 2:
        return [list(range(len(widths)))]
    groups: list[list[int]] = []
    current = [0]
    used = widths[0] + 4
    for i in range(1, len(widths)):
        if len(current) > 1 and used + widths[i] + 3 > limit:
            groups.append(current)
            current, used = [0], widths[0] + 4
        current.append(i)
        used += widths[i] + 3
    groups.append(current)
    return groups


def print_table(table: Table, console: Console) -> None:
    """Print ``table`` whole: at its natural width in a log, split by columns in a narrow terminal."""
    widths = _widths(table)
    natural = sum(w + 3 for w in widths) + 1
    limit = console.width if console.is_terminal else None
    groups = _column_groups(widths, limit)
    for n, group in enumerate(groups):
        title = table.title if len(groups) == 1 else f"{table.title} ({n + 1}/{len(groups)})"
        rich = RichTable(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for i in group:
            col = table.columns[i]
            rich.add_column(col.header, justify="left" if col.align == "left" else "right", no_wrap=True)
        for row in table.rows:
            rich.add_row(*(Text(row[i].plain(), style="dim" if row[i].dim else "") for i in group))
        if console.is_terminal:
            console.print(rich)
        else:  # a log: as wide as the table, however narrow the (absent) terminal
            saved = console.width
            console.width = max(natural, saved)
            try:
                console.print(rich, crop=False)
            finally:
                console.width = saved
    for note in table.notes:
        console.print(note, markup=False, highlight=False, soft_wrap=True)


# --------------------------------------------------------------------------- Markdown


def to_markdown(table: Table, *, heading: str = "") -> str:
    """A GitHub-flavoured Markdown table (with an optional heading line and the notes after it)."""
    lines = [heading, ""] if heading else []
    lines.append("| " + " | ".join(col.header for col in table.columns) + " |")
    lines.append("|" + "|".join("---:" if c.align == "right" else "---" for c in table.columns) + "|")
    for row in table.rows:
        cells = [(f"*{c.plain()}*" if c.dim and c.plain() else c.plain()).replace("|", "\\|") for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    if table.notes:
        lines += ["", *table.notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- HTML


def _html_cell(cell: Cell, tag: str, left: bool = False) -> str:
    body = escape(cell.text)
    if cell.aside:
        body += f' <span class="ci">{escape(cell.aside)}</span>'
    if cell.marks:
        who = escape(", ".join(cell.marks))
        body += f' <span class="sig" title="significantly different from {who}">{SIG_MARK}{escape(",".join(cell.marks))}</span>'
    classes = " ".join(c for c, on in (("dim", cell.dim), ("left", left and tag == "td")) if on)
    cls = f' class="{classes}"' if classes else ""
    scope = " scope=row" if tag == "th" else ""
    return f"<{tag}{scope}{cls}>{body}</{tag}>"


def to_html(table: Table, *, css_class: str = "results") -> str:
    """A ``<table>`` whose first column is a row header; ``id`` is the table's key."""
    left = ' class="left"'
    head = "".join(
        f"<th{left if col.align == 'left' else ''}>{escape(col.header)}</th>" for col in table.columns
    )
    body = "".join(
        "<tr>"
        + "".join(
            _html_cell(cell, "th" if i == 0 else "td", table.columns[i].align == "left")
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in table.rows
    )
    ident = f' id="{escape(table.key)}"' if table.key else ""
    notes = "".join(f'<p class="muted">{escape(n)}</p>' for n in table.notes)
    return f'<table class="{css_class}"{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}'
