"""Agreement measured honestly, with stand-in judges whose behaviour is known (tests/_openai_server.py).

The pool is the top 10 of lexical, vector and hybrid of a real run on the session's Elasticsearch
(40 SciFact queries). SciFact's judgments list only relevant documents, so the pooled pairs they do
not judge count as 0, for the stand-ins' truth as for the agreement. The stand-ins measure the
machinery (prompt, answer, parsing, pairing with human labels, the statistics), not any LLM.

* ``flip:F`` mirrors the label of the pairs :func:`flips` picks: the test predicts every label from the
  human ones and that rule, and the harness's kappa must equal the closed-form kappa of the predicted
  marginals; the kappa the flip rate alone predicts lies inside the reported interval.
* ``random`` answers uniformly: kappa near 0, its interval holding 0.
* ``offscale:F`` answers off the scale on a share of pairs: each is counted, none gets a grade.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from harness.judgments.judge import builtin_prompt
from tests._openai_server import OFF_SCALE, OpenAIServer, flips, unit
from tests.harness.judgments.judge.conftest import ARMS, answers, provenance, qrels_file, run_judge, truth_of


def closed_form_kappa(a: list[int], b: list[int]) -> float:
    """Cohen's kappa from the marginals, written out: (p_o - p_e) / (1 - p_e)."""
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    labels = set(a) | set(b)
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in labels)
    return (po - pe) / (1 - pe)


def test_flip_judge_kappa_matches_the_analytic_value(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = 0.25
    code, text = run_judge(
        capsys, standins, tmp_path / "c", tmp_path / "o", str(base_run), "--arms", ARMS,
        "--llm", f"flip:{f}", "--template", "binary",
    )  # fmt: skip
    assert code == 0, text
    rows = answers(tmp_path / "o")
    human = [int((r["human"] or 0) >= 1) for r in rows]
    flipped = [flips(r["query_id"], r["doc_id"], f) for r in rows]
    predicted = [1 - h if fl else h for h, fl in zip(human, flipped, strict=True)]
    assert [r["label"] for r in rows] == predicted
    n, agreement = len(rows), provenance(tmp_path / "o").agreement
    assert agreement is not None and n > 500 and agreement.combined.pairs == n
    k = agreement.combined.binary
    assert k.value == pytest.approx(closed_form_kappa(human, predicted), abs=1e-12)
    expected = [
        [sum(h == i and p == j for h, p in zip(human, predicted, strict=True)) for j in (0, 1)]
        for i in (0, 1)
    ]
    assert [list(r) for r in agreement.combined.confusion.counts] == expected
    # what the flip rate alone predicts from the human marginal p: the realised flips are near f
    p, realised = sum(human) / n, sum(flipped) / n
    assert abs(realised - f) < 4 * math.sqrt(f * (1 - f) / n)
    q = p * (1 - f) + (1 - p) * f
    pe = p * q + (1 - p) * (1 - q)
    assert k.low <= ((1 - f) - pe) / (1 - pe) <= k.high
    assert agreement.combined.weighted is None  # SciFact's human labels are binary
    assert agreement.human.endswith("pooled pairs they do not judge counted as 0 (not relevant)")
    systems = agreement.combined.systems
    assert (
        systems is not None and systems.systems == ("lexical", "vector", "hybrid") and systems.queries == 40
    )
    assert f"kappa {k.value:.3f} [{k.low:.3f}, {k.high:.3f}] on {n:,} pairs" in text
    with capsys.disabled():
        print(f"\n  flip:{f} on {n} pairs: kappa {k.value:.4f} [{k.low:.3f}, {k.high:.3f}], closed form "
              f"{closed_form_kappa(human, predicted):.4f}, from f and p {((1 - f) - pe) / (1 - pe):.4f}; "
              f"tau {systems.kendall_tau:.2f}")  # fmt: skip


def _graded_copy(gate_data: Path, dest: Path) -> Path:
    """The dataset with graded judgments (1-3 for the judged pairs, and some judged 0)."""
    shutil.copytree(gate_data, dest)
    lines = (dest / "qrels" / "test.tsv").read_text().splitlines()
    rows = [line.split("\t") for line in lines[1:]]
    graded = [(q, d, 1 + int(unit("grade", q, d) * 3)) for q, d, _ in rows]
    corpus = [json.loads(line)["_id"] for line in (dest / "corpus.jsonl").read_text().splitlines()]
    judged = {d for _, d, _ in rows}
    zeros = [(q, d, 0) for (q, _, _), d in zip(rows, [c for c in corpus if c not in judged], strict=False)]
    body = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in graded + zeros)
    (dest / "qrels" / "test.tsv").write_text(body)
    return dest


def test_flip_judge_weighted_kappa_on_graded_judgments(
    server: OpenAIServer, gate_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _graded_copy(gate_data, tmp_path / "graded")
    truth = truth_of(data)
    server.state.judge_labels = truth
    unjudged = [(q, f"extra-{i}") for i, (q, _) in enumerate(list(truth)[:10])]
    pairs = tmp_path / "pairs.trec"
    pairs.write_text("".join(f"{q} 0 {d}\n" for q, d in [*truth, *unjudged]))
    code, text = run_judge(
        capsys, server, tmp_path / "c", tmp_path / "o", "--pairs", str(pairs), "--dataset", str(data),
        "--llm", "flip:0.3", "--template", "graded",
    )  # fmt: skip
    assert code == 0, text
    assert "10 skipped (no document text)" in text  # documents the corpus does not hold
    prov = provenance(tmp_path / "o", "graded")
    agreement = prov.agreement
    assert agreement is not None and "left out" in agreement.human  # judged 0s exist: unjudged pairs skipped
    keys = list(truth)
    h = [truth[k] for k in keys]
    j = [3 - g if flips(q, d, 0.3) else g for (q, d), g in zip(keys, h, strict=True)]
    x, y = np.array(h), np.array(j)
    observed = np.abs(x - y).mean() / 3
    expected = np.mean([abs(a - b) for a in h for b in j]) / 3
    weighted = agreement.combined.weighted
    assert weighted is not None and weighted.weights == "linear" and agreement.combined.pairs == len(keys)
    assert weighted.value == pytest.approx(1 - observed / expected, abs=1e-12)
    binary = closed_form_kappa([int(g >= 1) for g in h], [int(g >= 2) for g in j])
    assert agreement.combined.binary.value == pytest.approx(binary, abs=1e-12)


def test_random_judge_kappa_is_near_zero_within_its_interval(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run_judge(
        capsys, standins, tmp_path / "c", tmp_path / "o", str(base_run), "--arms", ARMS, "--llm", "random",
    )  # fmt: skip
    assert code == 0, text
    agreement = provenance(tmp_path / "o").agreement
    assert agreement is not None
    k = agreement.combined.binary
    assert k.low <= 0.0 <= k.high and abs(k.value) < 0.1 and agreement.combined.pairs > 500
    spread = Counter(r["label"] for r in answers(tmp_path / "o"))
    assert set(spread) == {0, 1, 2, 3} and min(spread.values()) > 0.15 * sum(spread.values())
    with capsys.disabled():
        print(
            f"\n  random judge: kappa {k.value:.4f} [{k.low:.3f}, {k.high:.3f}] on {agreement.combined.pairs} pairs"
        )


def test_off_scale_answers_are_counted_and_never_given_a_grade(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = "offscale:0.3"
    code, text = run_judge(
        capsys, standins, tmp_path / "c", tmp_path / "o", str(base_run), "--arms", ARMS, "--llm", model,
    )  # fmt: skip
    assert code == 0, text
    rows = answers(tmp_path / "o")
    off = standins.state.judge_events[f"{model} offscale"]
    failed = [r for r in rows if r["label"] is None]
    assert off > 50 and len(failed) == off
    assert all(r["judges"][0]["answer"] in OFF_SCALE and r["judges"][0]["problem"] for r in failed)
    prov = provenance(tmp_path / "o")
    assert prov.parse_failures == off and prov.labelled == len(rows) - off
    lines = qrels_file(tmp_path / "o").read_text().splitlines()
    assert len(lines) == len(rows) - off
    assert not {(r["query_id"], r["doc_id"]) for r in failed} & {
        (ln.split()[0], ln.split()[2]) for ln in lines
    }
    agreement = prov.agreement
    assert agreement is not None and agreement.combined.parse_failures == off
    # every answer that parsed is the truth: a failure defaulted to any grade would pull kappa below 1
    assert agreement.combined.pairs == len(rows) - off and agreement.combined.binary.value == 1.0
    judge_id = f"{model}/{builtin_prompt('graded').sha256[:12]}/graded"
    assert f"parse failures {judge_id}: {off}" in text


def test_several_judges_combine_and_agree_among_themselves(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = ("flip:0.1", "flip:0.1@1", "offscale:0.2")
    llms = [a for m in models for a in ("--llm", m)]
    code, text = run_judge(
        capsys, standins, tmp_path / "c", tmp_path / "o", str(base_run), "--arms", ARMS, *llms,
        "--template", "binary", "--combine", "majority",
    )  # fmt: skip
    assert code == 0, text
    rows = answers(tmp_path / "o")
    for r in rows:
        given = [v["label"] for v in r["judges"] if v["label"] is not None]
        most = max(Counter(given).values())
        assert r["label"] == min(g for g in given if given.count(g) == most)
    prov = provenance(tmp_path / "o")
    assert prov.combine == "majority" and len(prov.judges) == 3 and prov.id.startswith("majority(flip:0.1/")
    agreement = prov.agreement
    assert agreement is not None and [a.judge for a in agreement.judges] == [j.id for j in prov.judges]
    full = [
        [v["label"] for v in r["judges"]] for r in rows if all(v["label"] is not None for v in r["judges"])
    ]
    counts = np.array([[row.count(c) for c in (0, 1)] for row in full], dtype=float)
    per_item = ((counts * (counts - 1)).sum(axis=1) / (3 * 2)).mean()
    shares = counts.sum(axis=0) / counts.sum()
    fleiss = (per_item - (shares**2).sum()) / (1 - (shares**2).sum())
    assert agreement.fleiss_pairs == len(full) and agreement.fleiss_kappa == pytest.approx(fleiss, abs=1e-12)
    assert f"Fleiss' kappa among the 3 judges: {fleiss:.3f}" in text
    for model in models:
        assert f"judge {model}/" in text and "calls to make" in text
