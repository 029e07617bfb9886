"""The self-contained HTML report: structure offline, then rendered in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from base import slug
from harness.inspect import render_html, write_html
from harness.results import RunResults
from indexer.data import load_dataset
from tests._support import SCIFACT
from tests.harness.inspect.synthetic import ARMS, DATASETS, N_QUERIES, make_run_dir

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("html") / "run")[0]


def test_html_is_self_contained(run_dir: Path) -> None:
    html = render_html(run_dir)
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+[^\s\"'<>)]*", html))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace only, never fetched
    assert not re.search(r"<(link|img|iframe|object|embed)\b", html)
    assert not re.search(r"\b(src|href)\s*=", html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_the_paper_bm25_line_is_drawn_on_an_r2med_dataset(run_dir: Path) -> None:
    """Defect: the runner writes paper["BM25"] as {system, score} and the chart read a number, so the line
    never showed on an R2MED dataset. The synthetic run now holds the runner's own typed shape."""
    html = render_html(run_dir)
    assert html.count('class="paper"><title>published BM25: 0.1920</title>') == 1  # Biology only
    assert "published BM25</text>" in html  # and the legend says what the dashed line is


def test_html_holds_tables_plots_and_drilldown(run_dir: Path) -> None:
    html = render_html(run_dir)
    for name in DATASETS:
        sid = slug(name)
        assert f'id="table-{sid}"' in html and f'id="plot-delta-{sid}"' in html and f'id="dd-{sid}"' in html
    assert 'id="plot-ndcg"' in html and 'id="paper-baselines"' in html
    assert html.count('<details class="query"') == N_QUERIES * len(DATASETS)
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in html and "<b>&</b>" not in html  # query text is escaped
    assert html.count("<th>rank in ") == N_QUERIES * len(DATASETS) * len(ARMS)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian package `chromium`)")
def test_html_renders_in_headless_chromium(run_dir: Path, tmp_path: Path) -> None:
    page = write_html(run_dir, tmp_path / "report.html")
    base = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0", "--window-size=1200,1800",
    ]  # fmt: skip
    shot = tmp_path / "report.png"
    done = subprocess.run(
        [*base, f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.stat().st_size > 20_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    dom = subprocess.run(
        [*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=False
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []  # no errors, no CSP violations (no network requests), no logging at all
    assert 'data-ready="1"' in dom.stdout  # the inline script ran to its end
    assert 'id="js-error"' not in dom.stdout
    for name in DATASETS:
        assert f'id="table-{slug(name)}"' in dom.stdout
        assert f"{N_QUERIES} of {N_QUERIES} queries" in dom.stdout  # the drill-down script counted them
    assert 'id="plot-ndcg"' in dom.stdout and "<rect" in dom.stdout


def test_the_ann_sweep_draws_its_recall_latency_frontier(tmp_path: Path) -> None:
    from dataclasses import replace

    from harness.ann import mark_frontier
    from harness.results import AnnPoint, AnnSweep, Distribution, RunResults, SweepSettings

    run_dir = make_run_dir(tmp_path / "run", with_records=False)[0]
    results = RunResults.load(run_dir)
    points = [
        AnnPoint(
            t, c, r, 0.6, Distribution(p50=ms, p99=3 * ms), Distribution(p50=ms), 100.0, 8_000_000, f"i-{t}"
        )
        for t, c, r, ms in (
            ("hnsw", 10, 0.90, 1.0),
            ("hnsw", 100, 0.99, 2.0),
            ("int8_hnsw", 10, 0.85, 1.5),
            ("int8_hnsw", 100, 0.97, 2.5),
            ("flat", None, 1.0, 9.0),
        )
    ]
    sweep = AnnSweep(
        SweepSettings(("hnsw", "int8_hnsw", "flat"), (10, 100)),
        "vector",
        "ab" * 32,
        500,
        40,
        "client",
        mark_frontier(points),
    )
    name = next(iter(results.datasets))
    datasets = {**results.datasets, name: replace(results.datasets[name], ann_sweep=sweep)}
    replace(results, datasets=datasets).save(run_dir)
    html = render_html(run_dir)
    svg = re.search(rf'<svg id="plot-frontier-{slug(name)}".*?</svg>', html, re.S)
    assert svg is not None
    assert svg.group(0).count('r="4"') == 5  # one dot per point
    assert svg.group(0).count('r="7"') == 3  # hnsw@10, hnsw@100 and flat are on the frontier; int8 is not
    assert "<title>frontier</title>" in svg.group(0) and "log scale" in svg.group(0)
    assert f'id="ann-{slug(name)}"' in html  # and the sweep's table


def test_the_scifact_sample_shows_its_beir_baseline_and_every_bar_its_ci_whisker(tmp_path: Path) -> None:
    """Issue 21: the report said "No paper baselines for these datasets" for SciFact, whose Elasticsearch
    BM25 is published (BEIR), and the nDCG bars had no confidence whiskers. The synthetic run's "sample"
    is given the fingerprint of the real SciFact test set (as a run of the sample records it)."""
    run_dir = make_run_dir(tmp_path / "run", with_records=False)[0]
    results = RunResults.load(run_dir)
    real = asdict(load_dataset(str(SCIFACT)).fingerprint)
    infos = dict(results.manifest.datasets)
    infos["sample"] = replace(infos["sample"], fingerprint=real)
    replace(results, manifest=replace(results.manifest, datasets=infos)).save(run_dir)
    html = render_html(run_dir)
    bm25 = re.search(r"Elasticsearch BM25[^:]*: ([0-9.]+)", (SCIFACT / "SOURCE.md").read_text())
    assert bm25 is not None
    assert f'class="paper"><title>published BM25: {float(bm25.group(1)):.4f}</title>' in html
    table = re.search(r'<table class="results" id="paper-baselines">.*?</table>', html, re.S)
    assert table is not None
    assert re.search(
        rf'<th scope=row>sample</th><td class="left">BM25</td><td>{bm25.group(1)}</td>', table.group(0)
    )
    assert "Thakur" in html and "No published baselines" not in html
    svg = re.search(r'<svg id="plot-ndcg".*?</svg>', html, re.S)
    assert svg is not None
    whiskers = re.findall(
        r'<g class="ci-whisker"><title>([^<]*)</title><line [^>]*y1="([\d.]+)" y2="([\d.]+)"', svg.group(0)
    )
    assert len(whiskers) == len(DATASETS) * len(ARMS)
    for name, arm in ((n, a) for n in DATASETS for a in ARMS):
        lo, hi = results.datasets[name].arms[arm].ci95["ndcg@10"]
        (found,) = [w for w in whiskers if w[0] == f"{name} · {arm}: 95% CI {lo:.3f}–{hi:.3f}"]
        assert float(found[1]) > float(found[2])  # from the low end (lower on the page) up to the high
