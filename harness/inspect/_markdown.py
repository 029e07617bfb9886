"""Markdown rendering of ``results.json`` (the runner writes it as ``report.md``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Columns of the per-arm tables: (results.json measure, header).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("ndcg@10", "nDCG@10"),
    ("ndcg@100", "nDCG@100"),
    ("recall@10", "R@10"),
    ("recall@100", "R@100"),
    ("map@100", "MAP@100"),
    ("mrr@100", "MRR@100"),
    ("p@10", "P@10"),
    ("unjudged@10", "unjudged@10"),
)
CI_MEASURE = "ndcg@10"
SIG_MARK = "†"


def fmt(value: Any, digits: int = 4) -> str:
    """A score as text; ``–`` when absent."""
    if value is None:
        return "–"
    if isinstance(value, int | float):
        return f"{value:.{digits}f}"
    return str(value)


def paper_cells(paper: Mapping[str, Any] | None) -> dict[str, str]:
    """``paper`` entry of a dataset as header -> text (``0.1234`` or ``0.1234 (system)``)."""
    cells: dict[str, str] = {}
    for name, value in (paper or {}).items():
        if isinstance(value, Mapping):
            score, system = value.get("score"), value.get("system")
            cells[f"paper {name}"] = f"{fmt(score)} ({system})" if system else fmt(score)
        else:
            cells[f"paper {name}"] = fmt(value)
    return cells


def significance_marks(significance: Sequence[Mapping[str, Any]], arm: str, measure: str) -> list[str]:
    """Arms that ``arm`` differs from significantly on ``measure`` (as arm_a of a tested pair)."""
    return [
        str(s["arm_b"])
        for s in significance
        if s.get("arm_a") == arm and s.get("measure") == measure and s.get("significant")
    ]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return lines


def run_facts(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The header facts of a run (what ran, with what, where), shared by the Markdown and HTML reports."""
    model = manifest.get("model") or {}
    facts = [
        ("created", manifest.get("created")),
        ("mode", manifest.get("mode")),
        ("fusion", manifest.get("fusion")),
        ("model", f"{model.get('id')}@{model.get('revision')}" if model.get("id") else None),
        ("engine", (manifest.get("engine") or {}).get("version")),
        ("harness", manifest.get("harness_version")),
        ("git", manifest.get("git_sha")),
    ]
    return [(k, str(v)) for k, v in facts if v]


def render_markdown(results: Mapping[str, Any]) -> str:
    """The report: run header, a summary with paper scores, and one table per dataset with CIs and marks."""
    manifest = results.get("manifest", {}) or {}
    datasets: Mapping[str, Any] = results.get("datasets", {}) or {}
    out: list[str] = [f"# R2MED harness run {manifest.get('run_id', '')}".rstrip(), ""]
    out += [f"- {k}: `{v}`" for k, v in run_facts(manifest)]
    out.append("")

    arms = list(dict.fromkeys(arm for d in datasets.values() for arm in (d.get("arms") or {})))
    paper_headers = list(dict.fromkeys(h for d in datasets.values() for h in paper_cells(d.get("paper"))))
    out += ["## nDCG@10 summary", ""]
    summary_rows = []
    for name, data in datasets.items():
        arm_data = data.get("arms") or {}
        paper = paper_cells(data.get("paper"))
        summary_rows.append(
            [name]
            + [fmt((arm_data.get(a) or {}).get("metrics", {}).get("ndcg@10")) for a in arms]
            + [paper.get(h, "–") for h in paper_headers]
        )
    out += _table(["dataset", *arms, *paper_headers], summary_rows)
    out.append("")

    for name, data in datasets.items():
        significance = data.get("significance") or []
        out += [f"## {name}", ""]
        rows = []
        for arm, info in (data.get("arms") or {}).items():
            metrics = info.get("metrics") or {}
            ci = (info.get("ci95") or {}).get(CI_MEASURE)
            row = []
            for measure, _ in COLUMNS:
                cell = fmt(metrics.get(measure))
                if measure == CI_MEASURE and ci:
                    cell += f" [{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]"
                marks = significance_marks(significance, arm, measure)
                if marks:
                    cell += f" {SIG_MARK}" + ",".join(marks)
                row.append(cell)
            latency = info.get("latency_ms") or {}
            rows.append(
                [arm, *row, fmt(latency.get("p50"), 1), fmt(latency.get("p95"), 1), fmt(info.get("qps"), 1)]
            )
        out += _table(["arm", *(h for _, h in COLUMNS), "p50 ms", "p95 ms", "QPS"], rows)
        out.append("")
        out.append(
            f"nDCG@10 with its 95% bootstrap CI; {SIG_MARK}X: significantly different from arm X "
            "(paired test, Holm-corrected)."
        )
        out.append("")
        if significance:
            sig_rows = [
                [
                    str(s.get("measure")),
                    f"{s.get('arm_a')} vs {s.get('arm_b')}",
                    fmt(s.get("delta")),
                    fmt(s.get("p_value")),
                    fmt(s.get("p_holm")),
                    "yes" if s.get("significant") else "no",
                    str(s.get("test", "")),
                ]
                for s in significance
            ]
            out += _table(["measure", "pair", "Δ", "p", "p (Holm)", "significant", "test"], sig_rows)
            out.append("")
        paper = paper_cells(data.get("paper"))
        if paper:
            out += [
                "Paper baselines: " + "; ".join(f"{k.removeprefix('paper ')} {v}" for k, v in paper.items()),
                "",
            ]
    return "\n".join(out).rstrip() + "\n"
