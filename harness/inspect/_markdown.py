"""``report.md``: the run's tables in Markdown (the same tables the terminal and the HTML draw)."""

from __future__ import annotations

from harness.inspect._baselines import baselines_table
from harness.inspect._judgments import agreement_tables
from harness.inspect._overlap import overlap_table
from harness.inspect._perf_tables import ann_sweep_table, load_table
from harness.inspect._sweep_table import sweep_table
from harness.inspect._table import to_markdown
from harness.inspect._tables import arm_table, significance_table, summary_table
from harness.results import ExpansionInfo, RunResults


def render_markdown(results: RunResults) -> str:
    """The report: run header, the nDCG@10 summary beside the paper, then per dataset its arms and tests."""
    manifest = results.manifest
    out: list[str] = [f"# R2MED harness run {manifest.run_id}", ""]
    out += [f"- {k}: `{v}`" for k, v in manifest.facts()]
    out += [f"- vectors: {line}" for line in manifest.vectors()]
    out.append("")
    notes = manifest.engine_notes()
    if notes:
        engine = f"{manifest.engine.capabilities.flavour} {manifest.engine.version}"
        out += [f"## What {engine} lacked here", "", *(f"- {note}" for note in notes), ""]
    out.append(to_markdown(summary_table(results), heading="## nDCG@10 summary"))
    baselines = baselines_table(results)
    if baselines.rows:
        out.append(to_markdown(baselines, heading="## Published baselines"))
    for name, ds in results.datasets.items():
        out.append(to_markdown(arm_table(name, ds), heading=f"## {name}"))
        swept = sweep_table(name, ds)
        if swept is not None:
            out.append(to_markdown(swept, heading=f"### {name}: held-out sweep"))
        loads = load_table(name, ds)
        if loads is not None:
            out.append(to_markdown(loads, heading=f"### {name}: load phase"))
        if ds.ann_sweep is not None:
            out.append(to_markdown(ann_sweep_table(name, ds.ann_sweep), heading=f"### {name}: ANN sweep"))
        if ds.significance:
            out.append(
                to_markdown(significance_table(name, ds.significance), heading=f"### {name}: paired tests")
            )
        if ds.overlap:
            out.append(
                to_markdown(overlap_table(name, ds.overlap), heading=f"### {name}: agreement between arms")
            )
        for table in agreement_tables(name, ds.judgments.judge if ds.judgments else None):
            out.append(to_markdown(table, heading=f"### {table.title}"))
        info = manifest.datasets.get(name)
        if info is not None and info.expansion is not None:
            out += expansion_lines(info.expansion)
    return "\n".join(out).rstrip() + "\n"


def expansion_lines(info: ExpansionInfo) -> list[str]:
    """What the ``+<method>`` arms searched with: the set, its prompt, and the reasoning split off."""
    prompts = ", ".join(p[:12] for p in info.prompt_sha256) or "not recorded"
    out = [f"Expansion `{info.label}` ({info.queries} queries; prompt sha256 {prompts})."]
    r = info.reasoning
    if r.format:
        out.append(
            f"Reasoning model ({r.format}): searched with {r.rule}; {r.queries_with_trace} traces split off "
            f"(mean {r.trace_words_mean} words, answers {r.answer_words_mean} words), kept in records.jsonl as "
            "query.reasoning, never searched with."
        )
    elif r.queries_with_trace:
        out.append(
            f"{r.queries_with_trace} reasoning traces kept apart by the file (records.jsonl: query.reasoning), "
            "never searched with."
        )
    if r.no_answer:
        out.append(
            f"{len(r.no_answer)} queries had no answer after the trace (searched with the query alone): "
            + ", ".join(r.no_answer[:20])
        )
    return [*out, ""]
