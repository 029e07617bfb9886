"""The one table model, drawn for a log, a narrow terminal, Markdown and HTML."""

from __future__ import annotations

import io

from rich.console import Console

from harness.inspect import Cell, Column, Table, arm_table, print_table, to_html, to_markdown
from tests.harness.inspect.synthetic import DATASETS, make_dataset, synthetic_results

TABLE = Table(
    title="sample (300 queries)",
    columns=(Column("arm", "left"), *(Column(f"measure {i}") for i in range(10))),
    rows=(
        (Cell("lexical"), Cell("0.6639", aside="[0.574,0.741]", marks=("hybrid",)), *(Cell("0.1234") for _ in range(9))),
        (Cell("paper BM25", dim=True), Cell("0.1510", aside="base retriever/bm25", dim=True), *(Cell("") for _ in range(9))),
    ),
    notes=("a note",),
)  # fmt: skip


def _render(console: Console) -> str:
    print_table(TABLE, console)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def test_a_log_gets_every_cell_whole_however_narrow() -> None:
    """Defect: outside a terminal rich wrapped the results at 80 columns (``0.6639 [0.574,…``)."""
    text = _render(Console(file=io.StringIO(), width=80, force_terminal=False))
    assert "…" not in text
    row = next(line for line in text.splitlines() if "lexical" in line)
    assert "0.6639 [0.574,0.741] †hybrid" in row and row.count("0.1234") == 9
    assert "0.1510 base retriever/bm25" in text and "a note" in text


def test_a_narrow_terminal_gets_the_columns_in_parts_each_with_the_arm() -> None:
    text = _render(Console(file=io.StringIO(), width=60, force_terminal=True, color_system=None))
    lines = text.splitlines()
    assert "…" not in text and all(len(line) <= 60 for line in lines)
    assert "sample (300 queries) (1/" in text
    rows = [line for line in lines if "lexical" in line]
    assert len(rows) >= 2  # every part repeats the arm column
    assert sum(row.count("0.1234") for row in rows) == 9 and "0.6639 [0.574,0.741] †hybrid" in text


def test_markdown_and_html_draw_the_same_cells() -> None:
    md = to_markdown(TABLE)
    assert "| lexical | 0.6639 [0.574,0.741] †hybrid |" in md and "| *paper BM25* |" in md
    html = to_html(TABLE)
    assert '<th scope=row>lexical</th><td>0.6639 <span class="ci">[0.574,0.741]</span>' in html
    assert 'title="significantly different from hybrid">†hybrid</span>' in html


def test_arm_table_rows_are_arms_then_paper_baselines() -> None:
    results = synthetic_results({n: make_dataset(n, seed=i + 7) for i, n in enumerate(DATASETS)})
    table = arm_table("Biology", results.datasets["Biology"])
    assert [row[0].text for row in table.rows] == [
        "lexical", "vector", "hybrid", "paper BM25", "paper best dense retriever", "paper best generation-augmented",
    ]  # fmt: skip
    assert table.rows[3][1].text == "0.1920" and table.rows[3][1].dim
