"""`harness compare` and a run's agreement table on real runs (the session's Elasticsearch, the gate's runs).

``base_run`` and ``degraded_run`` (tests/harness/conftest.py) search the same 40-query SciFact cut; the
degraded run differs only in its query prompt, which reaches the query vectors alone: its lexical arm
is the same ranking as the base run's, its vector arm is not.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from harness._compare import overlap_runs
from harness.cli import main
from harness.eval import overlap_at_k, rbo
from harness.results import OVERLAP_FILE, PairScores, RunResults, load_pair_scores, load_ranking, trec_path
from tests.harness.cli.old_names import deprecated, line
from tests.harness.conftest import GATE_DATASET


def test_a_run_holds_the_agreement_of_its_tested_pairs(base_run: Path) -> None:
    ds = RunResults.load(base_run).datasets[GATE_DATASET]
    tested = [(c.arm_a, c.arm_b) for c in ds.significance]
    assert [(o.arm_a, o.arm_b) for o in ds.overlap] == tested
    assert ("lexical", "hybrid") in tested and ("vector", "hybrid") in tested
    rows = load_pair_scores(base_run)
    assert len(rows) == 40 * len(tested)
    by_pair: dict[tuple[str, str], dict[str, PairScores]] = defaultdict(dict)
    for row in rows:
        by_pair[(row.arm_a, row.arm_b)][row.qid] = row
    for o in ds.overlap:
        # the TREC files the run wrote give the same figures, query by query
        a = load_ranking(trec_path(base_run, GATE_DATASET, o.arm_a))
        b = load_ranking(trec_path(base_run, GATE_DATASET, o.arm_b))
        for qid, row in by_pair[(o.arm_a, o.arm_b)].items():
            assert row.overlap == round(overlap_at_k(a[qid], b[qid], 10), 6)
            assert row.rbo == round(rbo(a[qid], b[qid], 0.9), 6)
        per_query = by_pair[(o.arm_a, o.arm_b)].values()
        assert o.queries == 40 and (o.k, o.p, o.variant) == (10, 0.9, "rbo_ext")
        assert o.overlap == pytest.approx(math.fsum(r.overlap for r in per_query) / 40, abs=2e-6)
        assert o.rbo == pytest.approx(math.fsum(r.rbo for r in per_query) / 40, abs=2e-6)
        # a fused arm shares part of its inputs' top 10, but not all of it
        assert 0.0 < o.overlap < 1.0 and 0.0 < o.rbo < 1.0
    assert json.loads((base_run / "results.json").read_text())["datasets"][GATE_DATASET]["overlap"]
    assert (base_run / OVERLAP_FILE).is_file()
    assert "agreement between arms" in (base_run / "report.md").read_text()


def test_compare_shows_what_moved_between_two_runs(
    base_run: Path, degraded_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = {o.arm_b.split(":", 1)[1]: o for o in overlap_runs([base_run, degraded_run])}
    assert set(found) == {"lexical", "vector", "hybrid", "hybrid-engine-sum"}
    lexical, vector = found["lexical"], found["vector"]
    assert (lexical.overlap, lexical.rbo, lexical.changed, lexical.queries) == (1.0, 1.0, 0, 40)
    assert vector.overlap < 0.9 and vector.rbo < 0.9 and vector.changed > 0
    assert main(["compare", str(base_run), str(degraded_run)]) == 0
    out = capsys.readouterr().out
    row = next(
        line for line in out.splitlines() if "degraded:lexical vs base:lexical" in line and "40" in line
    )
    assert row.split()[-5:] == ["40", "1.0000", "1.0000", "0", "(0%)"]
    row = next(line for line in out.splitlines() if "degraded:vector vs base:vector" in line and "(" in line)
    assert f"{vector.overlap:.4f}" in row and f"{vector.rbo:.4f}" in row


def test_compare_writes_its_comparisons_with_output_and_the_old_json(
    base_run: Path, degraded_run: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """``--output`` writes the comparisons (JSON); ``--json PATH``, its old name, still does, with one line."""
    runs = [str(base_run), str(degraded_run)]
    assert main(["compare", *runs, "-o", str(tmp_path / "new.json")]) == 0
    assert deprecated(capfd.readouterr().err) == []
    assert main(["compare", *runs, "--json", str(tmp_path / "old.json")]) == 0
    assert deprecated(capfd.readouterr().err) == [line("--json", "--output")]
    written = json.loads((tmp_path / "new.json").read_text())
    assert written and {c["measure"] for c in written} == {"ndcg@10"}
    assert json.loads((tmp_path / "old.json").read_text()) == written
