"""Markdown report from a synthetic results.json."""

from __future__ import annotations

import json
from pathlib import Path

from harness.inspect import render_markdown
from tests.harness.inspect.synthetic import ARMS, DATASETS, make_run_dir


def test_markdown_has_every_dataset_arm_ci_mark_and_paper_score(tmp_path: Path) -> None:
    run_dir, _ = make_run_dir(tmp_path / "run", with_records=False)
    results = json.loads((run_dir / "results.json").read_text())
    text = render_markdown(results)
    for name in DATASETS:
        assert f"## {name}" in text
    lines = text.splitlines()
    for name, data in results["datasets"].items():
        section = lines[lines.index(f"## {name}") :]
        for arm in ARMS:
            row = next(line for line in section if line.startswith(f"| {arm} |"))
            ndcg = data["arms"][arm]["metrics"]["ndcg@10"]
            lo, hi = data["arms"][arm]["ci95"]["ndcg@10"]
            assert f"{ndcg:.4f} [{lo:.3f}, {hi:.3f}]" in row
            significant = any(
                s["arm_a"] == arm and s["significant"]
                for s in data["significance"]
                if s["measure"] == "ndcg@10"
            )
            assert ("†lexical" in row) == significant
    summary = lines[lines.index("## nDCG@10 summary") + 2]
    assert summary.startswith("| dataset |") and "paper BM25" in summary
    biology = next(line for line in lines if line.startswith("| Biology |"))
    assert "0.1920" in biology and "0.2760 (NV-Embed-v2)" in biology
    assert "rrf:k=60" in text and "9.5.4" in text


def test_markdown_without_paper_scores_or_significance() -> None:
    results = {"datasets": {"sample": {"arms": {"lexical": {"metrics": {"ndcg@10": 0.5}}}}}, "manifest": {}}
    text = render_markdown(results)
    assert "| lexical | 0.5000 |" in text and "paper" not in text.lower().replace("paired", "")
