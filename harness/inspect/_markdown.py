"""``report.md``: the run's tables in Markdown (the same tables the terminal and the HTML draw)."""

from __future__ import annotations

from harness.inspect._table import to_markdown
from harness.inspect._tables import arm_table, significance_table, summary_table
from harness.results import RunResults


def render_markdown(results: RunResults) -> str:
    """The report: run header, the nDCG@10 summary beside the paper, then per dataset its arms and tests."""
    manifest = results.manifest
    out: list[str] = [f"# R2MED harness run {manifest.run_id}", ""]
    out += [f"- {k}: `{v}`" for k, v in manifest.facts()]
    out.append("")
    out.append(to_markdown(summary_table(results), heading="## nDCG@10 summary"))
    for name, ds in results.datasets.items():
        out.append(to_markdown(arm_table(name, ds), heading=f"## {name}"))
        if ds.significance:
            out.append(
                to_markdown(significance_table(name, ds.significance), heading=f"### {name}: paired tests")
            )
    return "\n".join(out).rstrip() + "\n"
