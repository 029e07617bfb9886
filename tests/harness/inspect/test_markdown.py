"""report.md from a synthetic run directory, through the typed results."""

from __future__ import annotations

from pathlib import Path

from harness.inspect import render_markdown
from harness.results import ArmResult, DatasetResult, Percentiles, RunResults
from tests.harness.inspect.synthetic import ARMS, DATASETS, make_run_dir, synthetic_results


def test_markdown_has_every_dataset_arm_ci_mark_and_paper_score(tmp_path: Path) -> None:
    run_dir, _ = make_run_dir(tmp_path / "run", with_records=False)
    results = RunResults.load(run_dir)
    text = render_markdown(results)
    lines = text.splitlines()
    for name, ds in results.datasets.items():
        assert f"## {name}" in text
        section = lines[lines.index(f"## {name}") :]
        for arm in ARMS:
            row = next(line for line in section if line.startswith(f"| {arm} |"))
            result = ds.arms[arm]
            lo, hi = result.ci95["ndcg@10"]
            assert f"{result.metrics['ndcg@10']:.4f} [{lo:.3f},{hi:.3f}]" in row
            significant = [c for c in ds.significance if arm in (c.arm_a, c.arm_b) and c.significant]
            assert ("†" in row) == bool(significant)
    assert set(DATASETS) == set(results.datasets)
    summary = lines[lines.index("## nDCG@10 summary") + 2]
    assert summary.startswith("| dataset |") and "paper BM25" in summary
    biology = next(line for line in lines if line.startswith("| Biology |"))
    assert "0.1920" in biology and "0.2760" in biology
    assert "| *paper BM25* | *0.1920 base retriever/bm25* |" in text
    assert "rrf:norm=none,k=60" in text or "rrf:k=60" in text
    assert "9.5.4" in text


def test_significance_rows_say_b_minus_a() -> None:
    """The delta in report.md is mean B − mean A of the pair as the runner tested it (sign included)."""
    results = synthetic_results_for_test()
    text = render_markdown(results)
    lines = text.splitlines()
    for name, ds in results.datasets.items():
        section = lines[lines.index(f"### {name}: paired tests") :]
        for c in ds.significance:
            row = next(line for line in section if line.startswith(f"| {c.arm_b} vs {c.arm_a} |"))
            assert f"{c.mean_b - c.mean_a:+.4f}" in row


def synthetic_results_for_test() -> RunResults:
    from tests.harness.inspect.synthetic import make_dataset

    return synthetic_results({name: make_dataset(name, seed=i + 7) for i, name in enumerate(DATASETS)})


def test_markdown_without_paper_scores_or_significance() -> None:
    base = synthetic_results_for_test()
    arm = ArmResult({"ndcg@10": 0.5}, {}, Percentiles(), Percentiles(), None, 3)
    results = RunResults({"sample": DatasetResult({"lexical": arm})}, base.manifest)
    text = render_markdown(results)
    assert "| lexical | 0.5000 |" in text and "paper" not in text.lower().replace("paired", "")
