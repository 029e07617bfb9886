"""The self-contained HTML report: tables, inline SVG plots and a per-query drill-down.

One file, no network requests: CSS, JS and SVG are inline and a Content-Security-Policy
forbids every fetch. Works from ``results.json`` alone; the per-query delta plot also
uses ``per_query.jsonl`` and the drill-down uses ``records.jsonl`` when they exist.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from harness.inspect._markdown import COLUMNS, SIG_MARK, fmt, paper_cells, run_facts, significance_marks
from harness.inspect._rundir import load_per_query, load_records, load_results

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def slug(name: str) -> str:
    """An HTML id fragment for a dataset or arm name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x"


def _arm_colors(arms: Sequence[str]) -> dict[str, str]:
    return {arm: PALETTE[i % len(PALETTE)] for i, arm in enumerate(arms)}


# --------------------------------------------------------------------------- tables


def _dataset_table(name: str, data: Mapping[str, Any]) -> str:
    significance = data.get("significance") or []
    head = "".join(f"<th>{escape(h)}</th>" for _, h in COLUMNS)
    rows = []
    for arm, info in (data.get("arms") or {}).items():
        metrics = info.get("metrics") or {}
        ci = (info.get("ci95") or {}).get("ndcg@10")
        cells = []
        for measure, _ in COLUMNS:
            text = escape(fmt(metrics.get(measure)))
            if measure == "ndcg@10" and ci:
                text += f' <span class="ci">[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]</span>'
            marks = significance_marks(significance, arm, measure)
            if marks:
                text += f' <span class="sig" title="significantly different from {escape(", ".join(marks))}">'
                text += f"{SIG_MARK}{escape(','.join(marks))}</span>"
            cells.append(f"<td>{text}</td>")
        latency = info.get("latency_ms") or {}
        cells += [
            f"<td>{fmt(latency.get('p50'), 1)}</td>",
            f"<td>{fmt(latency.get('p95'), 1)}</td>",
            f"<td>{fmt(info.get('qps'), 1)}</td>",
        ]
        rows.append(f"<tr><th scope=row>{escape(arm)}</th>{''.join(cells)}</tr>")
    table = (
        f'<table class="results" id="table-{slug(name)}"><thead><tr><th>arm</th>{head}'
        "<th>p50 ms</th><th>p95 ms</th><th>QPS</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )
    if significance:
        sig_rows = "".join(
            "<tr>"
            f"<td>{escape(str(s.get('measure')))}</td><td>{escape(str(s.get('arm_a')))} vs "
            f"{escape(str(s.get('arm_b')))}</td><td>{fmt(s.get('delta'))}</td><td>{fmt(s.get('p_value'))}</td>"
            f"<td>{fmt(s.get('p_holm'))}</td><td>{'yes' if s.get('significant') else 'no'}</td>"
            f"<td>{escape(str(s.get('test', '')))}</td></tr>"
            for s in significance
        )
        table += (
            f'<table class="sig-table" id="sig-{slug(name)}"><thead><tr><th>measure</th><th>pair</th><th>Δ</th>'
            "<th>p</th><th>p (Holm)</th><th>significant</th><th>test</th></tr></thead>"
            f"<tbody>{sig_rows}</tbody></table>"
        )
    return table


def _paper_table(datasets: Mapping[str, Any]) -> str:
    cells = {name: paper_cells(d.get("paper")) for name, d in datasets.items()}
    headers = list(dict.fromkeys(h for c in cells.values() for h in c))
    if not headers:
        return '<p id="paper-baselines">No paper baselines for these datasets.</p>'
    head = "".join(f"<th>{escape(h.removeprefix('paper '))}</th>" for h in headers)
    body = "".join(
        f"<tr><th scope=row>{escape(name)}</th>"
        + "".join(f"<td>{escape(c.get(h, '–'))}</td>" for h in headers)
        + "</tr>"
        for name, c in cells.items()
    )
    return (
        f'<table class="results" id="paper-baselines"><thead><tr><th>dataset</th>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


# --------------------------------------------------------------------------- plots


def _ndcg_plot(datasets: Mapping[str, Any], arms: Sequence[str], colors: Mapping[str, str]) -> str:
    width, height, left, bottom, top = 820, 320, 48, 60, 20
    plot_h = height - bottom - top
    values = [
        ((d.get("arms") or {}).get(a) or {}).get("metrics", {}).get("ndcg@10") or 0.0
        for d in datasets.values()
        for a in arms
    ]
    papers = [
        v for d in datasets.values() if isinstance(v := (d.get("paper") or {}).get("BM25"), int | float)
    ]
    ymax = max([0.1, *values, *papers])
    ymax = min(1.0, (int(ymax * 10) + 1) / 10)
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
    for gi, (name, data) in enumerate(datasets.items()):
        x0 = left + gi * group_w + 8
        for ai, arm in enumerate(arms):
            v = ((data.get("arms") or {}).get(arm) or {}).get("metrics", {}).get("ndcg@10")
            if v is None:
                continue
            x = x0 + ai * bar_w
            parts.append(
                f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bar_w - 2:.1f}" height="{y(0) - y(v):.1f}" '
                f'fill="{colors[arm]}"><title>{escape(name)} · {escape(arm)}: {v:.4f}</title></rect>'
            )
        bm25 = (data.get("paper") or {}).get("BM25")
        if isinstance(bm25, int | float):
            parts.append(
                f'<line x1="{x0 - 4:.1f}" x2="{x0 + len(arms) * bar_w + 2:.1f}" y1="{y(bm25):.1f}" '
                f'y2="{y(bm25):.1f}" class="paper"><title>paper BM25: {bm25:.4f}</title></line>'
            )
        parts.append(
            f'<text x="{x0 + len(arms) * bar_w / 2:.1f}" y="{height - bottom + 18}" class="label" '
            f'text-anchor="middle">{escape(name)}</text>'
        )
    lx = left
    for arm in arms:
        parts.append(
            f'<rect x="{lx}" y="{height - 22}" width="12" height="12" fill="{colors[arm]}"/>'
            f'<text x="{lx + 16}" y="{height - 12}" class="tick">{escape(arm)}</text>'
        )
        lx += 24 + 7 * len(arm)
    if papers:
        parts.append(
            f'<line x1="{lx}" x2="{lx + 18}" y1="{height - 16}" y2="{height - 16}" class="paper"/>'
            f'<text x="{lx + 22}" y="{height - 12}" class="tick">paper BM25</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _delta_plot(name: str, deltas: Sequence[tuple[str, float]], compare: str, baseline: str) -> str:
    width, height, pad = 820, 200, 40
    if not deltas:
        return f'<p class="muted" id="plot-delta-{slug(name)}">No per-query scores for {escape(compare)} and {escape(baseline)}.</p>'
    ordered = sorted(deltas, key=lambda item: (item[1], item[0]))
    span = max(0.05, *(abs(d) for _, d in ordered))
    mid = height / 2
    bar_w = (width - 2 * pad) / len(ordered)
    won = sum(1 for _, d in ordered if d > 1e-9)
    lost = sum(1 for _, d in ordered if d < -1e-9)
    parts = [
        f'<svg id="plot-delta-{slug(name)}" class="plot delta" viewBox="0 0 {width} {height}" width="{width}" '
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
    per_query: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any]],
    dataset: str,
    compare: str,
    baseline: str,
) -> list[tuple[str, float]]:
    scores: dict[str, dict[str, float]] = defaultdict(dict)
    for row in per_query:
        if row.get("dataset") == dataset and row.get("arm") in (compare, baseline):
            value = (row.get("metrics") or {}).get("ndcg@10")
            if isinstance(value, int | float):
                scores[str(row["qid"])][str(row["arm"])] = float(value)
    if not scores:
        for rec in records:
            if rec.get("dataset") == dataset:
                arms = rec.get("arms_ndcg_at_10") or {}
                if compare in arms and baseline in arms:
                    scores[str(rec["query"]["id"])] = {compare: arms[compare], baseline: arms[baseline]}
    return [(qid, s[compare] - s[baseline]) for qid, s in scores.items() if compare in s and baseline in s]


# --------------------------------------------------------------------------- drill-down


def _drilldown(name: str, records: Sequence[Mapping[str, Any]], arms: Sequence[str]) -> str:
    by_query: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for rec in records:
        if rec.get("dataset") == name:
            by_query[str(rec["query"]["id"])][str(rec["arm"])] = rec
    if not by_query:
        return '<p class="muted">No evaluation records (records.jsonl) for this dataset.</p>'
    rec_arms = [a for a in arms if any(a in r for r in by_query.values())] or sorted(
        {a for r in by_query.values() for a in r}
    )

    def worst_first(item: tuple[str, dict[str, Mapping[str, Any]]]) -> tuple[float, str]:
        delta = (next(iter(item[1].values())).get("comparison") or {}).get("ndcg_at_10_delta")
        return (delta if isinstance(delta, int | float) else 0.0, item[0])

    items = []
    for position, (qid, per_arm) in enumerate(sorted(by_query.items(), key=worst_first)):
        any_rec = next(iter(per_arm.values()))
        comparison = any_rec.get("comparison") or {}
        delta = comparison.get("ndcg_at_10_delta")
        ndcg = {a: (per_arm[a].get("metrics") or {}).get("ndcg_at_10") for a in per_arm}
        titles: dict[str, str] = {}
        for rec in per_arm.values():
            for hit in rec.get("top_hits") or []:
                titles.setdefault(str(hit["id"]), str(hit.get("title") or ""))
            for m in rec.get("missed") or []:
                titles.setdefault(str(m["id"]), str(m.get("title") or ""))
        judged_rows = []
        for att in any_rec.get("attribution") or []:
            doc = str(att["id"])
            rank_cells = []
            for arm in rec_arms:
                rank = None
                for a in per_arm.get(arm, {}).get("attribution") or []:
                    if str(a["id"]) == doc:
                        rank = a.get("rank")
                cls = "hit" if rank is not None and rank <= 10 else "far" if rank is not None else "miss"
                rank_cells.append(f'<td class="{cls}">{rank if rank is not None else "missed"}</td>')
            judged_rows.append(
                f"<tr><td>{escape(doc)}</td><td>{escape(str(att.get('grade')))}</td>"
                f"<td>{escape(titles.get(doc, ''))}</td>{''.join(rank_cells)}</tr>"
            )
        missed_blocks = []
        for arm in rec_arms:
            missed = (per_arm.get(arm) or {}).get("missed") or []
            if not missed:
                continue
            lis = "".join(
                f"<li><b>{escape(str(m['id']))}</b> (grade {escape(str(m.get('grade')))}; retrieved by "
                f"{escape(', '.join(m.get('retrieved_by') or []) or 'no arm')}) {escape(str(m.get('title') or ''))}"
                f'<div class="snippet">{escape(str(m.get("snippet") or ""))}</div></li>'
                for m in missed
            )
            missed_blocks.append(f'<div class="missed"><h5>missed by {escape(arm)}</h5><ul>{lis}</ul></div>')
        expansion = next(
            (r["query"].get("expansion") for r in per_arm.values() if r["query"].get("expansion")), None
        )
        summary_scores = " ".join(
            f'<span class="pill">{escape(a)} {fmt(ndcg.get(a), 3)}</span>' for a in rec_arms if a in ndcg
        )
        delta_text = (
            f'<span class="{"pos" if delta > 0 else "neg" if delta < 0 else "zero"}-text">'
            f"Δ {delta:+.3f}</span>"
            if isinstance(delta, int | float)
            else ""
        )
        head = "".join(f"<th>rank in {escape(a)}</th>" for a in rec_arms)
        items.append(
            f'<details class="query" data-qid="{escape(qid)}" data-text="{escape(str(any_rec["query"].get("text") or "").lower())}" '
            f'data-delta="{delta if isinstance(delta, int | float) else 0}"{" open" if position == 0 else ""}>'
            f"<summary><code>{escape(qid)}</code> {summary_scores} {delta_text}</summary>"
            f'<p class="qtext">{escape(str(any_rec["query"].get("text") or ""))}</p>'
            + (f'<p class="expansion"><b>expansion:</b> {escape(str(expansion))}</p>' if expansion else "")
            + f'<table class="judged"><thead><tr><th>relevant doc</th><th>grade</th><th>title</th>{head}</tr></thead>'
            f"<tbody>{''.join(judged_rows)}</tbody></table>" + "".join(missed_blocks) + "</details>"
        )
    sid = slug(name)
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
th{background:#f4f6fa}th[scope=row],td:first-child{text-align:left}.ci{color:#6b7485;font-size:11px}.sig{color:#b3261e;font-weight:600}
.plot{max-width:100%;height:auto;display:block;margin:8px 0}.grid{stroke:#e5e8ee}.axis{stroke:#333}.paper{stroke:#222;stroke-dasharray:4 3;stroke-width:2}
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


def render_html(run_dir: Path, *, compare_arm: str = "hybrid", baseline_arm: str = "lexical") -> str:
    """The whole report as one HTML string."""
    results = load_results(run_dir)
    records = load_records(run_dir, required=False)
    per_query = load_per_query(run_dir)
    manifest = results.get("manifest") or {}
    datasets: Mapping[str, Any] = results["datasets"]
    arms = list(dict.fromkeys(a for d in datasets.values() for a in (d.get("arms") or {})))
    colors = _arm_colors(arms)
    meta = " · ".join(f"{k} <code>{escape(v)}</code>" for k, v in run_facts(manifest))
    run_id = str(manifest.get("run_id") or Path(run_dir).name)
    sections = []
    for name, data in datasets.items():
        sid = slug(name)
        deltas = _deltas(per_query, records, name, compare_arm, baseline_arm)
        sections.append(
            f'<section class="dataset" id="dataset-{sid}"><h2>{escape(name)}</h2>'
            + _dataset_table(name, data)
            + f"<h3>Per-query nDCG@10 delta: {escape(compare_arm)} − {escape(baseline_arm)}</h3>"
            + _delta_plot(name, deltas, compare_arm, baseline_arm)
            + f'<h3>Per-query drill-down</h3><div class="drilldown" id="drilldown-{sid}">'
            + _drilldown(name, records, arms)
            + "</div></section>"
        )
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><title>R2MED harness run {escape(run_id)}</title>'
        f"<style>{STYLE}</style></head><body>"
        f'<h1>R2MED harness run <code>{escape(run_id)}</code></h1><p class="meta">{meta}</p>'
        '<h2 id="overview">nDCG@10 by dataset and arm</h2>'
        + _ndcg_plot(datasets, arms, colors)
        + '<h2 id="paper">Paper baselines (R2MED, nDCG@10)</h2>'
        + _paper_table(datasets)
        + "".join(sections)
        + f"<p class=muted>nDCG@10 with 95% bootstrap CI; {SIG_MARK}X = significantly different from arm X "
        "(paired test, Holm-corrected).</p>" + f"<script>{SCRIPT}</script></body></html>"
    )


def write_html(run_dir: Path, out: Path | None = None) -> Path:
    """Write the report (default ``RUN_DIR/report.html``) and return its path."""
    target = Path(out) if out is not None else Path(run_dir) / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(run_dir), encoding="utf-8")
    return target
