"""The self-contained HTML report: tables, inline SVG plots and a per-query drill-down.

One file, no network requests: CSS, JS and SVG are inline and a Content-Security-Policy
forbids every fetch. Works from ``results.json`` alone; the per-query delta plot also
uses ``per_query.jsonl`` and the drill-down uses ``records.jsonl`` when they exist. Every
input is read through the typed results (:mod:`harness.results`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from html import escape
from pathlib import Path

from base import slug, write_text_atomic
from harness.inspect._baselines import baselines_table, run_baselines
from harness.inspect._frontier import frontier_svg
from harness.inspect._judgments import agreement_tables, judgments_summary
from harness.inspect._overlap import overlap_table
from harness.inspect._perf_tables import ann_sweep_table, load_table
from harness.inspect._sweep_table import sweep_table
from harness.inspect._table import SIG_MARK, to_html
from harness.inspect._tables import CI_MEASURE, arm_table, fmt, significance_table
from harness.results import DatasetResult, EvalRecord, QueryScores, RunResults, load_per_query, load_records

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
PAPER_LINE = "BM25"  # the published baseline drawn as a line over each dataset's bars


def _id(name: str) -> str:
    return slug(name, fallback="x")


def _arm_colors(arms: Sequence[str]) -> dict[str, str]:
    return {arm: PALETTE[i % len(PALETTE)] for i, arm in enumerate(arms)}


# --------------------------------------------------------------------------- plots


def _whisker(x: float, lo: float, hi: float, y: Callable[[float], float], title: str) -> str:
    """The 95% CI of a bar: a vertical line from ``lo`` to ``hi`` at ``x`` with caps."""
    cap = 3.0
    return (
        f'<g class="ci-whisker"><title>{escape(title)}</title>'
        f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}"/>'
        f'<line x1="{x - cap:.1f}" x2="{x + cap:.1f}" y1="{y(lo):.1f}" y2="{y(lo):.1f}"/>'
        f'<line x1="{x - cap:.1f}" x2="{x + cap:.1f}" y1="{y(hi):.1f}" y2="{y(hi):.1f}"/></g>'
    )


def _ndcg_plot(results: RunResults, colors: Mapping[str, str], bm25: Mapping[str, float]) -> str:
    """nDCG@10 bars by dataset and arm, each with its 95% CI whisker; ``bm25``: the published BM25 of a
    dataset, drawn as a dashed line over its bars."""
    width, height, left, bottom, top = 820, 320, 48, 60, 20
    plot_h = height - bottom - top
    arms, datasets = results.arms, results.datasets
    values = [ds.arms[a].metric("ndcg@10") or 0.0 for ds in datasets.values() for a in arms if a in ds.arms]
    highs = [ci[1] for ds in datasets.values() for r in ds.arms.values() if (ci := r.ci95.get(CI_MEASURE))]
    ymax = min(1.0, (int(max([0.1, *values, *highs, *bm25.values()]) * 10) + 1) / 10)
    group_w = (width - left - 10) / max(1, len(datasets))
    bar_w = max(4.0, (group_w - 16) / max(1, len(arms)))

    def y(v: float) -> float:
        return top + plot_h * (1 - v / ymax)

    parts = [
        f'<svg id="plot-ndcg" class="plot" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'role="img" aria-label="nDCG@10 by dataset and arm" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i in range(6):
        v = ymax * i / 5
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y(v) + 4:.1f}" class="tick" text-anchor="end">{v:.2f}</text>'
        )
    for gi, (name, ds) in enumerate(datasets.items()):
        x0 = left + gi * group_w + 8
        for ai, arm in enumerate(arms):
            value = ds.arms[arm].metric("ndcg@10") if arm in ds.arms else None
            if value is None:
                continue
            v = value
            x = x0 + ai * bar_w
            ci = ds.arms[arm].ci95.get(CI_MEASURE)
            ci_text = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
            parts.append(
                f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bar_w - 2:.1f}" height="{y(0) - y(v):.1f}" '
                f'fill="{colors[arm]}"><title>{escape(name)} · {escape(arm)}: {v:.4f}{ci_text}</title></rect>'
            )
            if ci:
                title = f"{name} · {arm}: 95% CI {ci[0]:.3f}–{ci[1]:.3f}"
                parts.append(_whisker(x + (bar_w - 2) / 2, ci[0], ci[1], y, title))
        if name in bm25:
            line = bm25[name]
            parts.append(
                f'<line x1="{x0 - 4:.1f}" x2="{x0 + len(arms) * bar_w + 2:.1f}" y1="{y(line):.1f}" '
                f'y2="{y(line):.1f}" class="paper"><title>published BM25: {line:.4f}</title></line>'
            )
        parts.append(
            f'<text x="{x0 + len(arms) * bar_w / 2:.1f}" y="{height - bottom + 18}" class="label" '
            f'text-anchor="middle">{escape(name)}</text>'
        )
    parts.append(_legend(arms, colors, height, left, bool(bm25)))
    parts.append("</svg>")
    return "".join(parts)


def _legend(arms: Sequence[str], colors: Mapping[str, str], height: int, left: int, paper: bool) -> str:
    parts = []
    lx = left
    for arm in arms:
        parts.append(
            f'<rect x="{lx}" y="{height - 22}" width="12" height="12" fill="{colors[arm]}"/>'
            f'<text x="{lx + 16}" y="{height - 12}" class="tick">{escape(arm)}</text>'
        )
        lx += 24 + 7 * len(arm)
    if paper:
        parts.append(
            f'<line x1="{lx}" x2="{lx + 18}" y1="{height - 16}" y2="{height - 16}" class="paper"/>'
            f'<text x="{lx + 22}" y="{height - 12}" class="tick">published BM25</text>'
        )
    return "".join(parts)


def _delta_plot(name: str, deltas: Sequence[tuple[str, float]], compare: str, baseline: str) -> str:
    width, height, pad = 820, 200, 40
    if not deltas:
        return (
            f'<p class="muted" id="plot-delta-{_id(name)}">No per-query scores for {escape(compare)} and '
            f"{escape(baseline)}.</p>"
        )
    ordered = sorted(deltas, key=lambda item: (item[1], item[0]))
    span = max(0.05, *(abs(d) for _, d in ordered))
    mid = height / 2
    bar_w = (width - 2 * pad) / len(ordered)
    won = sum(1 for _, d in ordered if d > 1e-9)
    lost = sum(1 for _, d in ordered if d < -1e-9)
    parts = [
        f'<svg id="plot-delta-{_id(name)}" class="plot delta" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="per-query nDCG@10 delta {escape(compare)} minus '
        f'{escape(baseline)} on {escape(name)}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{pad}" y="14" class="tick">+{span:.2f}</text>',
        f'<text x="{pad}" y="{height - 4}" class="tick">−{span:.2f}</text>',
        f'<text x="{width - pad}" y="14" class="tick" text-anchor="end">{escape(compare)} won {won}, lost {lost}, '
        f"tied {len(ordered) - won - lost} of {len(ordered)}</text>",
    ]
    for i, (qid, d) in enumerate(ordered):
        h = abs(d) / span * (mid - 18)
        yy = mid - h if d >= 0 else mid
        cls = "pos" if d > 1e-9 else "neg" if d < -1e-9 else "zero"
        parts.append(
            f'<rect x="{pad + i * bar_w:.2f}" y="{yy:.1f}" width="{max(bar_w - 0.5, 0.5):.2f}" '
            f'height="{max(h, 0.8):.1f}" class="{cls}"><title>{escape(qid)}: {d:+.4f}</title></rect>'
        )
    parts.append(f'<line x1="{pad}" x2="{width - pad}" y1="{mid}" y2="{mid}" class="axis"/></svg>')
    return "".join(parts)


def _deltas(
    per_query: Sequence[QueryScores], records: Sequence[EvalRecord], dataset: str, compare: str, baseline: str
) -> list[tuple[str, float]]:
    """Per-query nDCG@10 of ``compare`` minus ``baseline`` (from per_query.jsonl, else from the records)."""
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for row in per_query:
        if row.dataset == dataset and row.arm in (compare, baseline) and "ndcg@10" in row.metrics:
            scores[row.qid][row.arm] = row.metrics["ndcg@10"]
    if not scores:
        for rec in records:
            arms = rec.arms_ndcg_at_10
            if rec.dataset == dataset and compare in arms and baseline in arms:
                scores[rec.query.id] = {compare: arms[compare], baseline: arms[baseline]}
    return [(qid, s[compare] - s[baseline]) for qid, s in scores.items() if compare in s and baseline in s]


# --------------------------------------------------------------------------- drill-down


def _judged_rows(per_arm: Mapping[str, EvalRecord], arms: Sequence[str], titles: Mapping[str, str]) -> str:
    any_rec = next(iter(per_arm.values()))
    rows = []
    for att in any_rec.attribution:
        cells = []
        for arm in arms:
            rank = (
                next((a.rank for a in per_arm[arm].attribution if a.id == att.id), None)
                if arm in per_arm
                else None
            )
            cls = "hit" if rank is not None and rank <= 10 else "far" if rank is not None else "miss"
            cells.append(f'<td class="{cls}">{rank if rank is not None else "missed"}</td>')
        rows.append(
            f"<tr><td>{escape(att.id)}</td><td>{att.grade}</td><td>{escape(titles.get(att.id, ''))}</td>"
            f"{''.join(cells)}</tr>"
        )
    return "".join(rows)


def _missed_blocks(per_arm: Mapping[str, EvalRecord], arms: Sequence[str]) -> str:
    blocks = []
    for arm in arms:
        missed = per_arm[arm].missed if arm in per_arm else ()
        if not missed:
            continue
        items = "".join(
            f"<li><b>{escape(m.id)}</b> (grade {m.grade}; retrieved by "
            f"{escape(', '.join(m.retrieved_by) or 'no arm')}) {escape(m.title)}"
            f'<div class="snippet">{escape(m.snippet)}</div></li>'
            for m in missed
        )
        blocks.append(f'<div class="missed"><h5>missed by {escape(arm)}</h5><ul>{items}</ul></div>')
    return "".join(blocks)


def _query_item(qid: str, per_arm: Mapping[str, EvalRecord], arms: Sequence[str], is_open: bool) -> str:
    any_rec = next(iter(per_arm.values()))
    delta = any_rec.comparison.ndcg_at_10_delta
    titles: dict[str, str] = {}
    for rec in per_arm.values():
        titles.update({h.id: h.title for h in rec.top_hits if h.id not in titles})
        titles.update({m.id: m.title for m in rec.missed if m.id not in titles})
    expansion = next((r.query.expansion for r in per_arm.values() if r.query.expansion), None)
    trace = next((r.query.reasoning for r in per_arm.values() if r.query.reasoning), None)
    pills = " ".join(
        f'<span class="pill">{escape(a)} {fmt(per_arm[a].metrics.ndcg_at_10, 3)}</span>'
        for a in arms
        if a in per_arm
    )
    delta_text = (
        f'<span class="{"pos" if delta > 0 else "neg" if delta < 0 else "zero"}-text">Δ {delta:+.3f}</span>'
        if delta is not None
        else ""
    )
    head = "".join(f"<th>rank in {escape(a)}</th>" for a in arms)
    text = any_rec.query.text
    return (
        f'<details class="query" data-qid="{escape(qid)}" data-text="{escape(text.lower())}" '
        f'data-delta="{delta if delta is not None else 0}"{" open" if is_open else ""}>'
        f"<summary><code>{escape(qid)}</code> {pills} {delta_text}</summary>"
        f'<p class="qtext">{escape(text)}</p>'
        + (f'<p class="expansion"><b>expansion:</b> {escape(expansion)}</p>' if expansion else "")
        + (
            '<details class="reasoning"><summary>reasoning trace (not searched with)</summary>'
            f"<p>{escape(trace)}</p></details>"
            if trace
            else ""
        )
        + f'<table class="judged"><thead><tr><th>relevant doc</th><th>grade</th><th>title</th>{head}</tr></thead>'
        f"<tbody>{_judged_rows(per_arm, arms, titles)}</tbody></table>{_missed_blocks(per_arm, arms)}</details>"
    )


def _drilldown(name: str, records: Sequence[EvalRecord], arms: Sequence[str]) -> str:
    by_query: dict[str, dict[str, EvalRecord]] = defaultdict(dict)
    for rec in records:
        if rec.dataset == name:
            by_query[rec.query.id][rec.arm] = rec
    if not by_query:
        return '<p class="muted">No evaluation records (records.jsonl) for this dataset.</p>'
    rec_arms = [a for a in arms if any(a in r for r in by_query.values())] or sorted(
        {a for r in by_query.values() for a in r}
    )

    def worst_first(item: tuple[str, dict[str, EvalRecord]]) -> tuple[float, str]:
        delta = next(iter(item[1].values())).comparison.ndcg_at_10_delta
        return (delta if delta is not None else 0.0, item[0])

    ordered = sorted(by_query.items(), key=worst_first)
    items = [_query_item(qid, per_arm, rec_arms, i == 0) for i, (qid, per_arm) in enumerate(ordered)]
    sid = _id(name)
    return (
        f'<div class="controls"><input type="search" class="filter" data-target="dd-{sid}" '
        f'placeholder="filter by query id or text"> <select class="sort" data-target="dd-{sid}">'
        '<option value="delta">sort by Δ (worst first)</option><option value="qid">sort by query id</option>'
        f'</select> <span class="count" id="count-{sid}">{len(items)} queries</span></div>'
        f'<div class="drill" id="dd-{sid}">' + "".join(items) + "</div>"
    )


# --------------------------------------------------------------------------- page

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1d2433;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #d8dde6;padding-bottom:4px}
h3{font-size:15px;margin-top:20px}.meta{color:#5a6478;font-size:13px}.meta code{background:#f1f3f7;padding:1px 4px;border-radius:3px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:13px}th,td{border:1px solid #d8dde6;padding:4px 8px;text-align:right}
th{background:#f4f6fa}th[scope=row],td:first-child,td.left,th.left{text-align:left}.ci{color:#6b7485;font-size:11px}.sig{color:#b3261e;font-weight:600}.dim{color:#6b7485}
.plot{max-width:100%;height:auto;display:block;margin:8px 0}.grid{stroke:#e5e8ee}.axis{stroke:#333}.paper{stroke:#222;stroke-dasharray:4 3;stroke-width:2}.ci-whisker line{stroke:#1d2433;stroke-width:1.2}
.tick{font-size:11px;fill:#4a5263}.label{font-size:12px;fill:#1d2433}.pos{fill:#2e7d32}.neg{fill:#c62828}.zero{fill:#9e9e9e}
.pos-text{color:#2e7d32}.neg-text{color:#c62828}.zero-text{color:#777}.muted{color:#777}
details.query{border:1px solid #e1e5ec;border-radius:4px;margin:4px 0;padding:4px 8px}details.query[open]{background:#fbfcfe}
summary{cursor:pointer}.pill{display:inline-block;background:#eef1f6;border-radius:10px;padding:0 7px;margin-left:4px;font-size:12px}
.qtext{font-style:italic}.judged td.hit{background:#e3f4e4}.judged td.far{background:#fff6d9}.judged td.miss{background:#fde4e4}
.snippet{color:#5a6478;font-size:12px}.missed h5{margin:8px 0 2px}.controls{margin:6px 0}.filter{width:280px;padding:3px 6px}
"""

SCRIPT = """
window.onerror=function(msg){var d=document.createElement('pre');d.id='js-error';d.textContent=String(msg);document.body.appendChild(d);};
(function(){
  function apply(id){
    var box=document.getElementById(id);if(!box)return;
    var f=document.querySelector('.filter[data-target="'+id+'"]');var s=document.querySelector('.sort[data-target="'+id+'"]');
    var q=(f&&f.value||'').toLowerCase();var items=Array.prototype.slice.call(box.querySelectorAll('details.query'));
    items.sort(function(a,b){return s&&s.value==='qid'?a.dataset.qid.localeCompare(b.dataset.qid):(parseFloat(a.dataset.delta)-parseFloat(b.dataset.delta));});
    var shown=0;items.forEach(function(el){box.appendChild(el);var ok=!q||el.dataset.qid.toLowerCase().indexOf(q)>=0||el.dataset.text.indexOf(q)>=0;el.style.display=ok?'':'none';if(ok)shown++;});
    var c=document.getElementById('count-'+id.slice(3));if(c)c.textContent=shown+' of '+items.length+' queries';
  }
  document.querySelectorAll('.filter,.sort').forEach(function(el){el.addEventListener('input',function(){apply(el.dataset.target);});});
  document.querySelectorAll('.drill').forEach(function(el){apply(el.id);});
  document.body.setAttribute('data-ready','1');
})();
"""


def _section(
    name: str, results: RunResults, data: tuple[list[QueryScores], list[EvalRecord]], pair: tuple[str, str]
) -> str:
    ds = results.datasets[name]
    per_query, records = data
    compare, baseline = pair
    sid = _id(name)
    tables = to_html(arm_table(name, ds))
    swept = sweep_table(name, ds)
    tables += to_html(swept) if swept is not None else ""
    tables += _performance(name, ds)
    if ds.significance:
        tables += to_html(significance_table(name, ds.significance), css_class="sig-table")
    if ds.overlap:
        tables += "<h3>Agreement between arms (no judgments)</h3>" + to_html(overlap_table(name, ds.overlap))
    tables += _judge_section(name, ds)
    return (
        f'<section class="dataset" id="dataset-{sid}"><h2>{escape(name)}</h2>{tables}'
        f"<h3>Per-query nDCG@10 delta: {escape(compare)} − {escape(baseline)}</h3>"
        + _delta_plot(name, _deltas(per_query, records, name, compare, baseline), compare, baseline)
        + f'<h3>Per-query drill-down</h3><div class="drilldown" id="drilldown-{sid}">'
        + _drilldown(name, records, results.arms)
        + "</div></section>"
    )


def _judge_section(name: str, ds: DatasetResult) -> str:
    """Labels from an LLM judge: its agreement with human judgments, confusion matrix and arms (when measured)."""
    judge = ds.judgments.judge if ds.judgments else None
    if judge is None:
        return ""
    body = "".join(to_html(t) for t in agreement_tables(name, judge))
    if not body:
        body = f"<p>{escape(judge.id)}: {escape(judge.agreement_text())}.</p>"
    return f'<h3 id="judge-{_id(name)}">Judge labels: agreement with human judgments</h3>{body}'


def _performance(name: str, ds: DatasetResult) -> str:
    """The load phase table, and the ANN sweep's table and recall-latency frontier (when measured)."""
    out = ""
    loads = load_table(name, ds)
    if loads is not None:
        out += f"<h3>Load phase</h3>{to_html(loads)}"
    if ds.ann_sweep is not None:
        out += (
            "<h3>ANN sweep: recall against latency</h3>"
            + frontier_svg(name, ds.ann_sweep, f"plot-frontier-{_id(name)}")
            + to_html(ann_sweep_table(name, ds.ann_sweep))
        )
    return out


def _pair(records: Sequence[EvalRecord], results: RunResults) -> tuple[str, str]:
    """(compared, baseline) arms: the records' comparison, else the last arm against the first."""
    if records:
        return records[0].comparison.arm, records[0].comparison.baseline_arm
    arms = results.arms
    return arms[-1], arms[0]


def render_html(run_dir: Path) -> str:
    """The whole report as one HTML string."""
    results = RunResults.load(run_dir)
    records = load_records(run_dir, required=False)
    data = (load_per_query(run_dir), records)
    manifest = results.manifest
    meta = " · ".join(f"{k} <code>{escape(v)}</code>" for k, v in manifest.facts())
    baselines = baselines_table(results)
    bm25 = {
        name: b.score for name, rows in run_baselines(results).items() for b in rows if b.label == PAPER_LINE
    }
    sections = "".join(_section(name, results, data, _pair(records, results)) for name in results.datasets)
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>R2MED harness run {escape(manifest.run_id)}</title><style>{STYLE}</style></head><body>"
        f'<h1>R2MED harness run <code>{escape(manifest.run_id)}</code></h1><p class="meta">{meta}</p>'
        '<h2 id="overview">nDCG@10 by dataset and arm</h2>'
        + _ndcg_plot(results, _arm_colors(results.arms), bm25)
        + '<p class="muted">Bars: nDCG@10; whiskers: its 95% bootstrap CI; dashed line: the published BM25.</p>'
        + f'<p class="muted" id="judgments">{escape(judgments_summary(results))}</p>'
        + '<h2 id="paper">Published baselines (nDCG@10)</h2>'
        + (
            to_html(baselines)
            if baselines.rows
            else '<p id="paper-baselines">No published baselines for these datasets.</p>'
        )
        + sections
        + f"<p class=muted>nDCG@10 with 95% bootstrap CI; {SIG_MARK}X = significantly different from arm X "
        "(paired test, Holm-corrected).</p>" + f"<script>{SCRIPT}</script></body></html>"
    )


def write_html(run_dir: Path, out: Path | None = None) -> Path:
    """Write the report (default ``RUN_DIR/report.html``) and return its path."""
    target = Path(out) if out is not None else Path(run_dir) / "report.html"
    write_text_atomic(target, render_html(run_dir))
    return target
