"""Failure inspection and reports: evaluation records, tables, Markdown and HTML, the worst queries.

Public surface:

- :func:`build_records` with a :class:`RecordContext` — one typed record per query × arm
  (metrics, first relevant rank, missed relevant documents, top hits, attribution, delta
  against a baseline, latency).
- :class:`Table` and its three renderers (:func:`print_table`, :func:`to_markdown`,
  :func:`to_html`); the run's tables (:func:`arm_table`, :func:`significance_table`,
  :func:`summary_table`, :func:`overlap_table`), the published baselines beside them
  (:func:`baselines_table`, :func:`run_baselines`: the R2MED paper's and the packaged BEIR figures), and which
  judgments scored a dataset with a judge's agreement (:func:`judgments_line`, :func:`agreement_tables`).
- :func:`print_results` — what a person reads after a run: the compact table (:func:`compact_table`,
  at most 100 columns) and one line of significant pairs (:func:`significance_line`); ``wide=True``
  prints every table of every dataset.
- :func:`render_markdown` — ``report.md``; :func:`render_html` / :func:`write_html` — the
  self-contained HTML report of a run directory.
- :func:`worst_queries` — the worst records, for ``harness failures``.
- :func:`import_saved_objects` — our Kibana saved objects into a Kibana.
"""

from harness.inspect._baselines import baselines_table, run_baselines
from harness.inspect._compact import MAX_COLUMNS, compact_table, print_results, significance_line
from harness.inspect._failures import worst_queries
from harness.inspect._html import render_html, write_html
from harness.inspect._judgments import agreement_tables, judgments_line, judgments_summary
from harness.inspect._kibana import ImportResult, KibanaAuth, import_saved_objects, saved_object_files
from harness.inspect._markdown import render_markdown
from harness.inspect._overlap import overlap_table
from harness.inspect._perf_tables import ann_sweep_table, dataset_tables, load_table
from harness.inspect._records import NEEDED_MEASURES, TOP_HITS, RecordContext, build_records
from harness.inspect._sweep_table import sweep_table
from harness.inspect._table import SIG_MARK, Cell, Column, Table, print_table, to_html, to_markdown
from harness.inspect._tables import arm_table, fmt, significance_table, summary_table

__all__ = [
    "MAX_COLUMNS",
    "NEEDED_MEASURES",
    "SIG_MARK",
    "TOP_HITS",
    "Cell",
    "Column",
    "ImportResult",
    "KibanaAuth",
    "RecordContext",
    "Table",
    "agreement_tables",
    "ann_sweep_table",
    "arm_table",
    "baselines_table",
    "build_records",
    "compact_table",
    "dataset_tables",
    "fmt",
    "import_saved_objects",
    "judgments_line",
    "judgments_summary",
    "load_table",
    "overlap_table",
    "print_results",
    "print_table",
    "render_html",
    "render_markdown",
    "run_baselines",
    "saved_object_files",
    "significance_line",
    "significance_table",
    "summary_table",
    "sweep_table",
    "to_html",
    "to_markdown",
    "worst_queries",
    "write_html",
]
