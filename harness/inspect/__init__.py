"""Failure inspection: evaluation records, the HTML and Markdown reports, the worst-queries view.

Public surface:

- :func:`build_records` — one record per query × arm (metrics, first relevant rank,
  missed relevant documents, top hits, attribution, delta against a baseline, latency);
  :func:`record_id` is its deterministic key.
- :func:`render_markdown` — ``results.json`` as Markdown (the runner's ``report.md``).
- :func:`render_html` / :func:`write_html` — the self-contained HTML report of a run directory.
- :func:`worst_queries` — the worst records, for ``harness failures``.
- :func:`import_saved_objects` — our Kibana saved objects into a Kibana.
- :func:`load_results`, :func:`load_records`, :func:`load_per_query` — reading a run directory.
"""

from harness.inspect._failures import worst_queries
from harness.inspect._html import render_html, write_html
from harness.inspect._kibana import ImportResult, KibanaAuth, import_saved_objects, saved_object_files
from harness.inspect._markdown import render_markdown
from harness.inspect._records import TOP_HITS, build_records, rank_run, record_id
from harness.inspect._rundir import load_per_query, load_records, load_results

__all__ = [
    "TOP_HITS",
    "ImportResult",
    "KibanaAuth",
    "build_records",
    "import_saved_objects",
    "load_per_query",
    "load_records",
    "load_results",
    "rank_run",
    "record_id",
    "render_html",
    "render_markdown",
    "saved_object_files",
    "worst_queries",
    "write_html",
]
