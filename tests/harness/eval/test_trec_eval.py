"""The harness's scores against trec_eval itself (the binary), and against ranx where ranx differs.

trec_eval comes from ``scripts/trec-eval`` (``scripts/setup --all``: Maven Central's jtreceval carries
trec_eval 9.0.4 for linux-amd64), or ``TREC_EVAL`` names one built from source. The collections are built
here: graded judgments with negative grades, runs with tied scores, text after the sixth column and comment
lines (trec_eval 9.0.4 reads no comments: it gets the same files without them). With ``TREC_EVAL_TESTS``
naming trec_eval's own ``test/`` folder (a checkout of usnistgov/trec_eval), ``harness score`` is also checked
against the expected outputs there.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.eval import evaluate
from harness.results import read_run
from indexer import read_judgments

CACHE = Path(
    os.environ.get("R2MED_HARNESS_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "r2med-harness"
)
TOL = 1e-4  # trec_eval prints 4 decimals


def _binary() -> str | None:
    given = os.environ.get("TREC_EVAL")
    if given:
        return given
    cached = CACHE / "tools" / "trec_eval-9.0.4" / "trec_eval"
    return str(cached) if cached.is_file() else shutil.which("trec_eval")


@pytest.fixture(scope="module")
def trec_eval() -> str:
    found = _binary()
    if found is None:
        if os.environ.get("R2MED_CI"):
            pytest.fail("trec_eval is missing: scripts/setup --all installs it (scripts/trec-eval)")
        pytest.skip("trec_eval is not installed (bash scripts/trec-eval, or TREC_EVAL=/path/to/trec_eval)")
    return found


def _collection(folder: Path, seed: int, gaps: bool = True) -> tuple[Path, Path, Path, Path]:
    """(qrels, run) as the harness reads them (comments, extra columns) and as trec_eval 9.0.4 reads them;
    ``gaps``: some judged queries without results (trec_eval 10 refuses them without -c)."""
    rng = random.Random(seed)
    docs = [f"d{i:03d}" for i in range(120)]
    qrels_lines, run_lines = ["# judged by a seeded coin"], ["# a run with ties and remarks"]
    for q in range(1, 26):
        qid = f"q{q}"
        for doc in rng.sample(docs, 40):
            grade = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3])
            qrels_lines.append(f"{qid} 0 {doc} {grade}")
        if q % 7 == 0 and gaps:
            continue  # judged, no results: trec_eval's -c counts it as 0
        for rank, doc in enumerate(rng.sample(docs, rng.randint(5, 110)), 1):
            score = round(rng.random() * 3, 1)  # ties on purpose
            extra = " scored by a coin" if rank % 9 == 0 else ""
            run_lines.append(f"{qid} Q0 {doc} {rank} {score} seeded{extra}")
    run_lines.append("q99 Q0 d001 1 1.0 seeded")  # a query without judgments
    ours_q, ours_r = folder / "ours.qrels", folder / "ours.trec"
    ours_q.write_text("\n".join(qrels_lines) + "\n")
    ours_r.write_text("\n".join(run_lines) + "\n")
    te_q, te_r = folder / "te.qrels", folder / "te.trec"
    te_q.write_text("".join(line + "\n" for line in qrels_lines if not line.startswith("#")))
    te_r.write_text(
        "".join(" ".join(line.split()[:6]) + "\n" for line in run_lines if not line.startswith("#"))
    )
    return ours_q, ours_r, te_q, te_r


def _trec_eval(binary: str, flags: list[str], qrels: Path, run: Path) -> dict[str, dict[str, float]]:
    out = subprocess.run(
        [binary, "-q", *flags, str(qrels), str(run)], capture_output=True, text=True, check=True
    )
    values: dict[str, dict[str, float]] = {}
    for line in out.stdout.splitlines():
        name, qid, value = line.split()
        if name not in ("runid", "num_q"):
            values.setdefault(name, {})[qid] = float(value)
    return values


#: trec_eval -m arguments -> the harness's measures (trec_eval's output names parse to them)
MEASURES = [
    "ndcg_cut.5,10,100",
    "P.5,10",
    "recall.10,100",
    "map",
    "map_cut.100",
    "recip_rank",
    "bpref",
    "success.1,5",
]
CASES = {
    "-c": (["-c"], 1, True),
    "-c -l 2": (["-c", "-l", "2"], 2, True),
    "without -c": ([], 1, False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_measure_matches_trec_eval_per_query(trec_eval: str, tmp_path: Path, case: str) -> None:
    flags, level, complete = CASES[case]
    ours_q, ours_r, te_q, te_r = _collection(tmp_path, seed=7, gaps=complete)
    theirs = _trec_eval(trec_eval, [*flags, *(f"-m{m}" for m in MEASURES)], te_q, te_r)
    qrels = read_judgments(ours_q).qrels().qrels
    ev = evaluate(qrels, read_run(ours_r), list(theirs), relevance_level=level, complete=complete)
    printed = set(theirs["map"]) - {"all"}  # trec_eval 9 prints no line for a query without results, 10 does
    assert printed <= set(ev.qids) and all(ev.per_query["map"][q] == 0.0 for q in set(ev.qids) - printed)
    compared = 0
    for name, values in theirs.items():
        for qid, value in values.items():
            ours = ev.means[_key(name)] if qid == "all" else ev.per_query[_key(name)][qid]
            assert ours == pytest.approx(value, abs=TOL), (name, qid)
            compared += 1
    assert compared > 250


def _key(trec_name: str) -> str:
    from harness.eval import Measure

    return Measure.parse(trec_name).key


def test_judged_only_ndcg_matches_trec_evals_J(trec_eval: str, tmp_path: Path) -> None:
    ours_q, ours_r, te_q, te_r = _collection(tmp_path, seed=11)
    theirs = _trec_eval(trec_eval, ["-c", "-J", "-mndcg_cut.10"], te_q, te_r)["ndcg_cut_10"]
    ev = evaluate(read_judgments(ours_q).qrels().qrels, read_run(ours_r), ["nDCG_judged@10"])
    for qid, value in theirs.items():
        ours = ev.means["ndcg_judged@10"] if qid == "all" else ev.per_query["ndcg_judged@10"][qid]
        assert ours == pytest.approx(value, abs=TOL), qid


def test_harness_score_prints_what_trec_eval_prints(trec_eval: str, tmp_path: Path, capsys) -> None:
    ours_q, ours_r, te_q, te_r = _collection(tmp_path, seed=3)
    expected = subprocess.run(
        [trec_eval, "-q", "-c", "-mndcg_cut.10", "-mP.10", "-mmap", "-mrecip_rank", str(te_q), str(te_r)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    code = main(["score", str(ours_r), "--qrels", str(ours_q), "-q", "-m", "ndcg_cut_10,P_10,map,recip_rank"])
    assert code == 0
    printed = capsys.readouterr().out.splitlines()
    wanted = {line for line in expected if not line.startswith(("runid", "num_q"))}
    assert wanted <= set(printed), sorted(wanted - set(printed))[:5]


def test_ranx_bpref_differs_where_no_non_relevant_is_judged_and_the_harness_follows_trec_eval(
    trec_eval: str, tmp_path: Path
) -> None:
    (tmp_path / "q.qrels").write_text("q1 0 a 1\nq1 0 b 1\n")
    (tmp_path / "r.trec").write_text("q1 Q0 a 1 2.0 t\nq1 Q0 c 2 1.0 t\nq1 Q0 b 3 0.5 t\n")
    theirs = _trec_eval(trec_eval, ["-mbpref"], tmp_path / "q.qrels", tmp_path / "r.trec")["bpref"]["q1"]
    import ranx

    ranx_value = ranx.evaluate({"q1": {"a": 1, "b": 1}}, {"q1": {"a": 2.0, "c": 1.0, "b": 0.5}}, "bpref")
    assert math.isnan(ranx_value)  # ranx divides by min(R, N) = 0
    ours = evaluate({"q1": {"a": 1, "b": 1}}, read_run(tmp_path / "r.trec"), ["Bpref"]).mean("Bpref")
    assert ours == pytest.approx(theirs) == 1.0


# --------------------------------------------------------------------------- trec_eval's own collections

TESTS = os.environ.get("TREC_EVAL_TESTS")
#: (trec_eval's arguments in its Makefile's quicktest, expected output, the measures harness score computes)
OFFICIAL = [
    ("qrels.test", "results.test", [], "out.test"),
    ("qrels.test.with-comments", "results.test", [], "out.test"),
    ("qrels.comment.test", "results.comment.test", [], "out.comment.test"),
    ("qrels.test", "results.test", [], "out.test.a"),
    ("qrels.test", "results.test", ["-q"], "out.test.aq"),
    ("qrels.test", "results.trunc", ["-q", "-c"], "out.test.aqc"),
    ("qrels.rel_level", "results.test", ["-q", "-l", "2"], "out.test.aql"),
]


def _supported(name: str) -> bool:
    from base import ConfigError
    from harness.eval import Measure

    try:
        return Measure.parse(name).trec_name == name
    except ConfigError:
        return False


@pytest.mark.skipif(not TESTS, reason="TREC_EVAL_TESTS names no checkout of trec_eval's test/ folder")
@pytest.mark.parametrize(
    ("qrels", "run", "flags", "expected"), OFFICIAL, ids=[o[3] + str(o[2]) for o in OFFICIAL]
)
def test_harness_score_reproduces_trec_evals_own_expected_output(qrels, run, flags, expected, capsys) -> None:
    folder = Path(str(TESTS))
    lines = [line for line in (folder / expected).read_text().splitlines() if _supported(line.split()[0])]
    names = sorted({line.split()[0] for line in lines})
    complete = "-c" in flags
    args = ["score", str(folder / run), "--qrels", str(folder / qrels), "-m", ",".join(names)]
    args += (["-q"] if "-q" in flags else []) + ([] if complete else ["--set", "eval.complete=false"])
    args += ["-l", flags[flags.index("-l") + 1]] if "-l" in flags else []
    assert main(args) == 0
    printed = set(capsys.readouterr().out.splitlines())
    missing = [line for line in lines if line not in printed]
    assert not missing, f"{len(missing)} of {len(lines)} lines differ, e.g. {missing[:3]}"
    assert len(lines) > 10
