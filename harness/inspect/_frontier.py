"""The recall-latency frontier of an ANN sweep as inline SVG (no script, no fetch).

x: service time p50 (ms, log scale when the points span more than a factor of 4), y: recall@k.
One polyline per index type through its candidate counts (in order), exact types as single
points; frontier points are ringed and joined by a dashed step line.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from html import escape

from harness.results import AnnPoint, AnnSweep

Scale = Callable[[float], float]
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")


def _scale(lo: float, hi: float, a: float, b: float, log: bool) -> Scale:
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
    span = hi - lo or 1.0

    def f(v: float) -> float:
        x = math.log10(v) if log else v
        return a + (b - a) * (x - lo) / span

    return f


def frontier_svg(name: str, sweep: AnnSweep, element_id: str) -> str:
    width, height, left, right, top, bottom = 820, 340, 56, 150, 16, 44
    points = [p for p in sweep.points if p.service_time_ms.p50 > 0]
    if not points:
        return f'<p class="muted" id="{escape(element_id)}">No sweep point has a measured latency.</p>'
    xs = [p.service_time_ms.p50 for p in points]
    ys = [p.recall_at_k for p in points]
    log = max(xs) / min(xs) > 4
    x_lo, x_hi = (min(xs) / 1.1, max(xs) * 1.1) if log else (0.0, max(xs) * 1.1)
    y_lo = max(0.0, math.floor(min(ys) * 20) / 20 - 0.05)
    fx = _scale(x_lo, x_hi, left, width - right, log)
    fy = _scale(y_lo, 1.0, height - bottom, top, False)
    colors = {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(sweep.settings.index_types)}
    parts = [
        f'<svg id="{escape(element_id)}" class="plot frontier" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="recall-latency frontier of the ANN sweep on {escape(name)}" '
        'xmlns="http://www.w3.org/2000/svg">',
        *_axes(fx, fy, (x_lo, x_hi), y_lo, log, (width, height, left, right, top, bottom), sweep.settings.k),
    ]
    by_type: dict[str, list[AnnPoint]] = {}
    for p in points:
        by_type.setdefault(p.index_type, []).append(p)
    for index_type, group in by_type.items():
        color = colors.get(index_type, PALETTE[0])
        if len(group) > 1:
            coords = " ".join(f"{fx(p.service_time_ms.p50):.1f},{fy(p.recall_at_k):.1f}" for p in group)
            parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="1.5"/>')
        parts += [_dot(p, fx, fy, color, sweep.settings.parameter) for p in group]
    parts.append(_frontier_line([p for p in points if p.frontier], fx, fy))
    parts.append(_legend(colors, width - right + 12, top))
    parts.append("</svg>")
    return "".join(parts)


def _axes(
    fx: Scale, fy: Scale, xr: tuple[float, float], y_lo: float, log: bool, box: Sequence[int], k: int
) -> list[str]:
    width, height, left, right, top, bottom = box
    out = []
    for i in range(6):
        v = y_lo + (1.0 - y_lo) * i / 5
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{fy(v):.1f}" y2="{fy(v):.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{fy(v) + 4:.1f}" class="tick" text-anchor="end">{v:.2f}</text>'
        )
    lo, hi = xr
    ticks = (
        [10**e * m for e in range(-2, 5) for m in (1, 2, 5)]
        if log
        else [lo + (hi - lo) * i / 5 for i in range(6)]
    )
    for v in ticks:
        if lo <= v <= hi:
            out.append(
                f'<line x1="{fx(v):.1f}" x2="{fx(v):.1f}" y1="{top}" y2="{height - bottom}" class="grid"/>'
                f'<text x="{fx(v):.1f}" y="{height - bottom + 16}" class="tick" text-anchor="middle">{v:g}</text>'
            )
    out.append(
        f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" class="label" text-anchor="middle">'
        f"service time p50 (ms{', log scale' if log else ''})</text>"
        f'<text x="14" y="{(top + height - bottom) / 2:.0f}" class="label" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + height - bottom) / 2:.0f})">recall@{k}</text>'
    )
    return out


def _dot(p: AnnPoint, fx: Scale, fy: Scale, color: str, parameter: str) -> str:
    x, y = fx(p.service_time_ms.p50), fy(p.recall_at_k)
    what = "exact" if p.candidates is None else f"{parameter} {p.candidates}"
    title = (
        f"{p.index_type}, {what}: recall {p.recall_at_k:.4f}, nDCG@10 {p.ndcg_at_10:.4f}, "
        f"p50 {p.service_time_ms.p50:.2f} ms, p99 {p.service_time_ms.p99:.2f} ms, {p.size_bytes / 1e6:.1f} MB"
    )
    ring = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="7" fill="none" stroke="#222"/>' if p.frontier else ""
    return f'{ring}<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}"><title>{escape(title)}</title></circle>'


def _frontier_line(points: Sequence[AnnPoint], fx: Scale, fy: Scale) -> str:
    ordered = sorted(points, key=lambda p: p.service_time_ms.p50)
    if len(ordered) < 2:
        return ""
    coords = []
    for a, b in itertools.pairwise(ordered):
        coords.append(f"{fx(a.service_time_ms.p50):.1f},{fy(a.recall_at_k):.1f}")
        coords.append(f"{fx(b.service_time_ms.p50):.1f},{fy(a.recall_at_k):.1f}")
    last = ordered[-1]
    coords.append(f"{fx(last.service_time_ms.p50):.1f},{fy(last.recall_at_k):.1f}")
    return (
        f'<polyline class="paper" points="{" ".join(coords)}" fill="none"><title>frontier</title></polyline>'
    )


def _legend(colors: Mapping[str, str], x: int, top: int) -> str:
    parts = []
    for i, (index_type, color) in enumerate(colors.items()):
        y = top + 8 + i * 18
        parts.append(
            f'<circle cx="{x + 5}" cy="{y}" r="5" fill="{color}"/>'
            f'<text x="{x + 16}" y="{y + 4}" class="tick">{escape(index_type)}</text>'
        )
    y = top + 8 + len(colors) * 18
    parts.append(
        f'<line x1="{x}" x2="{x + 12}" y1="{y}" y2="{y}" class="paper"/>'
        f'<text x="{x + 16}" y="{y + 4}" class="tick">frontier</text>'
    )
    return "".join(parts)
