"""scripts/trec-eval-parity: trec_eval itself on a real run directory's TREC files, against the scores the
harness wrote; a score that drifts from trec_eval's is named and exits 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from base import default_cache_dir
from harness.cli import main as harness_main
from indexer import ConnectionSettings
from tests._support import REPO, scifact_subset

SCRIPT = REPO / "scripts" / "trec-eval-parity"
CACHED = default_cache_dir() / "tools" / "trec_eval-9.0.4" / "trec_eval"  # where scripts/trec-eval puts it


def _parity(run_dir: Path, qrels: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(run_dir), "--qrels", str(qrels)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_run_agrees_with_trec_eval_and_a_changed_score_is_caught(
    es_settings: ConnectionSettings, tmp_path: Path
) -> None:
    if not (os.environ.get("TREC_EVAL") or CACHED.is_file()):
        if os.environ.get("R2MED_CI"):
            pytest.fail("trec_eval is missing: scripts/setup --all installs it (scripts/trec-eval)")
        pytest.skip("trec_eval is not installed (bash scripts/trec-eval)")
    data = scifact_subset(tmp_path / "parity-slice", n_docs=120, n_test=12, n_train=0)
    out = tmp_path / "run"
    argv = [
        "run",
        "lexical",
        "--dataset",
        str(data),
        "--url",
        es_settings.url,
        "--output",
        str(out),
        "--quiet",
    ]
    assert harness_main(argv) == 0
    qrels = data / "qrels" / "test.tsv"

    done = _parity(out, qrels)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split()[:3] == ["lexical", "ndcg@10", "ndcg_cut_10"] for line in lines), done.stdout
    assert any(line.split()[:4] == ["lexical", "ndcg_judged@10", "-J", "ndcg_cut_10"] for line in lines)
    assert "agree to 0.0001" in lines[-1]

    results = json.loads((out / "results.json").read_text())
    metrics = next(iter(results["datasets"].values()))["arms"]["lexical"]["metrics"]
    metrics["recall@100"] += 0.01
    (out / "results.json").write_text(json.dumps(results))
    done = _parity(out, qrels)
    assert done.returncode == 1
    assert "DIFFER to 0.0001" in done.stdout.splitlines()[-1]
    assert "1.0e-02" in next(line for line in done.stdout.splitlines() if "recall@100" in line)
