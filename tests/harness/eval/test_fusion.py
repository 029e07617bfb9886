"""harness.eval fusion against ranx's own fusion, spec parsing, and tuning on train."""

from __future__ import annotations

import random

import pytest
import ranx

from base import ConfigError
from harness.eval import (
    DEFAULT_FUSION,
    FUSION_METHODS,
    FusionSpec,
    evaluate,
    fuse,
    optimize_fusion,
    sort_run,
)

from .conftest import synthetic_run


@pytest.fixture(scope="module")
def arms(scifact_test_qrels):
    # 20 queries: each is its own fusion, and every ranx conversion of the runs costs in proportion
    qrels = {q: scifact_test_qrels[q] for q in sorted(scifact_test_qrels)[:20]}
    return qrels, {
        "lexical": synthetic_run(qrels, seed=11, depth=50, skill=0.5),
        "vector": synthetic_run(qrels, seed=12, depth=50, skill=0.4),
    }


SPECS = [
    "rrf",
    "rrf:k=10",
    "isr",
    "log_isr",
    "combsum",
    "combsum:norm=zmuv",
    "combsum:norm=max",
    "combsum:norm=none",
    "combmnz:norm=max",
    "combmnz:norm=zmuv",
    "combmax",
    "combmed",
    "combanz",
    "wsum:norm=min-max,weights=0.3/0.7",
    "wsum:norm=zmuv,weights=0.6/0.4",
    "wmnz:weights=0.5/0.5",
]


def test_every_registered_method_is_covered():
    assert {s.split(":")[0] for s in SPECS} == set(FUSION_METHODS)


@pytest.mark.parametrize("text", SPECS)
def test_fused_run_equals_ranx_fusion(arms, text):
    _, runs = arms
    spec = FusionSpec.parse(text)
    ours = fuse(runs, spec)
    # ranx on its own, straight from the (tie-free) arm runs.
    theirs = ranx.fuse(
        [ranx.Run(run, name=arm) for arm, run in runs.items()],
        norm=spec.norm,
        method=spec.info.ranx,
        params=spec.params(),
    ).to_dict()
    assert list(ours) == sorted(runs["lexical"])
    for qid in ours:
        assert set(ours[qid]) == set(theirs[qid]), qid
        for doc_id, score in ours[qid].items():
            assert score == pytest.approx(theirs[qid][doc_id], rel=1e-12, abs=1e-12), (qid, doc_id)
    # Returned in our rank order.
    assert ours == sort_run(ours)
    assert all(list(ours[q]) == list(sort_run(ours)[q]) for q in ours)


def test_rrf_is_the_default_with_k_60():
    assert DEFAULT_FUSION == FusionSpec.parse("rrf") == FusionSpec.parse("rrf:k=60")
    assert DEFAULT_FUSION.k == 60 and DEFAULT_FUSION.norm is None


def test_rrf_hand_computed_with_ties_broken_by_doc_id():
    runs = {"a": {"q": {"x": 1.0, "y": 1.0}}, "b": {"q": {"y": 5.0, "z": 4.0}}}
    fused = fuse(runs, "rrf:k=60")["q"]
    # arm a ranks y (doc id desc wins the tie, as trec_eval) then x; arm b ranks y then z.
    assert fused["y"] == pytest.approx(1 / 61 + 1 / 61)
    assert fused["x"] == pytest.approx(1 / 62)
    assert fused["z"] == pytest.approx(1 / 62)
    assert list(fused) == ["y", "z", "x"]  # x and z tie: doc id descending


def test_rank_based_fusion_ignores_dict_order(arms):
    _, runs = arms
    tied = {
        arm: {q: {d: round(s, 1) for d, s in docs.items()} for q, docs in run.items()}
        for arm, run in runs.items()
    }
    rng = random.Random(3)
    shuffled = {}
    for arm, run in tied.items():
        shuffled[arm] = {}
        for q in reversed(list(run)):
            items = list(run[q].items())
            rng.shuffle(items)
            shuffled[arm][q] = dict(items)
    a, b = fuse(tied, "rrf"), fuse(shuffled, "rrf")
    assert a == b and all(list(a[q]) == list(b[q]) for q in a)


def test_queries_missing_from_one_arm_are_still_fused():
    runs = {"a": {"q1": {"x": 2.0, "y": 1.0}, "q2": {"x": 1.0}}, "b": {"q1": {"y": 3.0}}}
    fused = fuse(runs, "combsum")
    assert list(fused) == ["q1", "q2"]
    assert set(fused["q2"]) == {"x"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("borda", "unknown fusion method 'borda'; known methods: rrf"),
        ("rrf:k=0", "k must be a positive integer"),
        ("rrf:k=ten", "bad value for k"),
        ("rrf:weights=1/2", "rrf takes k, norm; found 'weights'"),
        ("combsum:norm=l2", "unknown normalisation 'l2'; known: none, min-max"),
        ("combsum:k=3", "combsum takes norm; found 'k'"),
        ("wsum", "needs weights"),
        ("wsum:weights=0/0", "not all 0"),
        ("wsum:weights=0.5", None),  # valid spec; wrong count shows up at fuse time
        ("rrf:k", "expected key=value"),
        ("", "empty fusion spec"),
    ],
)
def test_spec_errors_are_clear(text, fragment):
    if fragment is None:
        FusionSpec.parse(text)
        return
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
        FusionSpec.parse(text)


@pytest.mark.parametrize("text", [*SPECS, "combsum:norm=rank", "wsum:weights=1.0/0.0"])
def test_spec_round_trips(text):
    spec = FusionSpec.parse(text)
    assert FusionSpec.parse(str(spec)) == spec
    assert spec.to_dict()["spec"] == str(spec)
    assert hash(spec) == hash(FusionSpec.parse(str(spec)))


def test_spec_defaults():
    assert FusionSpec.parse("combsum").norm == "min-max"
    assert str(FusionSpec.parse("combsum:norm=none")) == "combsum:norm=none"
    assert FusionSpec.parse("wsum:weights=0.3/0.7").to_dict() == {
        "method": "wsum",
        "norm": "min-max",
        "weights": [0.3, 0.7],
        "spec": "wsum:norm=min-max,weights=0.3/0.7",
    }


def test_fuse_rejects_bad_arm_sets(arms):
    _, runs = arms
    with pytest.raises(ConfigError, match="at least 2 arms"):
        fuse({"lexical": runs["lexical"]}, "rrf")
    with pytest.raises(ConfigError, match="1 weights for 2 arms"):
        fuse(runs, "wsum:weights=0.5")


@pytest.mark.parametrize(
    "spec", ["rrf", "rrf:k=10", "isr", "combsum", "combmnz", "wsum:weights=0.4/0.6", "combsum:norm=zmuv"]
)
def test_an_arm_with_no_results_at_all_fuses_as_zero(arms, spec):
    """Defect: one query whose lexical arm found nothing (``okra``) made the fusion fail ("no results for
    any of 1 queries"). An arm without any result now contributes 0: the fused run equals the fusion with
    that arm holding results that share no document with the other arm, minus those results."""
    _, runs = arms
    vector = runs["vector"]
    qids = sorted(vector)
    empty = {q: {} for q in qids}
    fused = fuse({"lexical": empty, "vector": vector}, spec)
    decoy = {q: {f"decoy-{q}": 1.0} for q in qids}  # documents no other arm retrieves
    reference = fuse({"lexical": decoy, "vector": vector}, spec)
    assert list(fused) == qids
    for q in qids:
        assert set(fused[q]) == set(vector[q])
        assert fused[q] == pytest.approx(
            {d: s for d, s in reference[q].items() if not d.startswith("decoy-")}
        )


def test_one_query_without_lexical_hits_fuses_from_the_vector_arm_alone():
    """The shape of the reported case: the first query by id has no BM25 hit."""
    lexical = {"0001-okra": {}, "0002": {"d1": 3.0, "d2": 1.0}}
    vector = {"0001-okra": {"d7": 0.9, "d8": 0.5}, "0002": {"d2": 0.8}}
    fused = fuse({"lexical": lexical, "vector": vector}, "rrf")
    assert fused["0001-okra"] == pytest.approx({"d7": 1 / 61, "d8": 1 / 62})
    assert list(fused["0002"]) == ["d2", "d1"]
    assert fuse({"lexical": {"0001-okra": {}}, "vector": {"0001-okra": {}}}, "rrf") == {"0001-okra": {}}


@pytest.fixture(scope="module")
def train(scifact_train_qrels):
    qrels = {q: scifact_train_qrels[q] for q in sorted(scifact_train_qrels)[:120]}
    runs = {
        "good": synthetic_run(qrels, seed=21, depth=50, skill=0.9),
        "weak": synthetic_run(qrels, seed=22, depth=50, skill=0.1),
    }
    return qrels, runs


def test_optimize_wsum_weights_on_train_favour_the_better_arm(train):
    qrels, runs = train
    spec = optimize_fusion(qrels, runs, method="wsum", norm="min-max", metric="nDCG@10")
    assert isinstance(spec, FusionSpec) and spec.method == "wsum" and spec.norm == "min-max"
    assert spec.weights is not None and len(spec.weights) == 2
    assert sum(spec.weights) == pytest.approx(1.0)
    assert spec.weights[0] > spec.weights[1]
    tuned = evaluate(qrels, fuse(runs, spec)).mean("nDCG@10")
    equal = evaluate(qrels, fuse(runs, "wsum:weights=0.5/0.5")).mean("nDCG@10")
    assert tuned >= equal


def test_optimize_only_sees_judged_train_queries(train):
    qrels, runs = train
    base = optimize_fusion(qrels, runs, method="wsum")
    # Extra (e.g. test) queries in the runs, where the weak arm would be best, change nothing.
    polluted = {arm: dict(run) for arm, run in runs.items()}
    for i in range(50):
        polluted["weak"][f"test-{i}"] = {"x": 1.0}
        polluted["good"][f"test-{i}"] = {"y": 1.0}
    assert optimize_fusion(qrels, polluted, method="wsum") == base


def test_optimize_rrf_returns_k(train):
    qrels, runs = train
    spec = optimize_fusion(qrels, runs, method="rrf")
    assert spec.method == "rrf" and spec.k in range(10, 101, 10) and spec.norm is None


def test_optimize_rejects_untunable_methods_and_measures(train):
    qrels, runs = train
    with pytest.raises(ConfigError, match="no parameters to tune; tunable methods: rrf, wsum, wmnz"):
        optimize_fusion(qrels, runs, method="combsum")
    with pytest.raises(ConfigError, match="not a quality measure"):
        optimize_fusion(qrels, runs, method="wsum", metric="Unjudged@10")
