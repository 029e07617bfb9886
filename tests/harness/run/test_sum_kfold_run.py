"""``--tune-on kfold`` tunes the in-engine weighted sum per fold, on the real engines and SciFact (a 300-document cut).

The recorded weights are recomputed here from the checkpointed lexical and vector runs of the other folds
only; a few queries of each fold are searched directly through the Backend with the strategy's body and
that fold's weights, and must rank as the arm's run does; a rerun sends no search.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import harness.run._arms as arms
from base import read_json
from harness.cli import main
from harness.eval import evaluate, tune_sum_weights
from harness.results import RunResults
from harness.run import ArmRun
from harness.strategies import EngineSum, QueryInput, SearchContext
from harness.sweep import kfold_split
from indexer import Backend
from indexer.data import load_dataset
from indexer.embed import CachedEmbedder, EmbeddingCache, Encoder, resolve_model
from tests._support import scifact_subset

NAME, ARM, K, SEED = "sum-kfold", "hybrid-engine-sum", 4, 7


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Test queries only (no train split, like R2MED)."""
    return scifact_subset(tmp_path_factory.mktemp("sumk") / NAME, n_docs=300, n_test=40, n_train=0)


def _run(url: str, data: Path, out: Path) -> None:
    args = ["run", "hybrid", "--dataset", str(data), "--output", str(out), "--url", url, "--no-ann-recall"]
    tune = ["--tune-on", f"kfold:{K}", "--seed", str(SEED), "--sweep-fusion", "method=rrf;k=10,60"]
    assert main([*args, "--records", "jsonl", "--no-progress", *tune]) == 0


def _ckpt(path: Path) -> dict[str, dict[str, float]]:
    return ArmRun.from_dict(read_json(path)).run


def _order(ranking: dict[str, float]) -> list[str]:
    return sorted(ranking, key=lambda d: (-ranking[d], d))


def test_kfold_tunes_the_engine_sum_per_fold(
    backend: Backend,
    data: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "run"
    _run(backend.url, data, out)
    printed = capsys.readouterr().out
    assert "does not tune the in-engine sum" not in printed
    result = RunResults.load(out).datasets[NAME]
    arm = result.arms[ARM]
    assert arm.weights is None and len(arm.fold_weights) == K

    ds = load_dataset(str(data))
    folds = kfold_split(sorted(ds.queries), K, SEED)
    ckpt = out / "arms" / NAME / "test"
    lexical, vector = _ckpt(ckpt / "lexical.json"), _ckpt(ckpt / "vector.json")
    scale = backend.bm25_scale(1.2)
    union: dict[str, dict[str, float]] = {}
    # the run's own numerics (the default, auto), from the shared, warm cache
    embedder = CachedEmbedder(Encoder(resolve_model("minilm"), backend="auto"), EmbeddingCache())
    for i, (held, weights) in enumerate(zip(folds, arm.fold_weights, strict=True)):
        others = [q for q in ds.queries if q not in held]
        fitted = tune_sum_weights(
            {q: ds.qrels[q] for q in others},
            {q: lexical[q] for q in others},
            {q: vector[q] for q in others},
            lexical_scale=scale,
        )
        assert tuple(weights) == fitted, i
        assert f"fold {i + 1}/{K}" in printed and f"lexical {weights[0]:g}, vector {weights[1]:g}" in printed
        run = _ckpt(ckpt / f"sum-kfold{K}-seed{SEED}" / f"fold-{i + 1}" / f"{ARM}.json")
        assert set(run) == set(held)
        union.update(run)
        # a direct engine search with this fold's weights ranks as the arm did
        ctx = SearchContext(
            depth=100, vector_field=embedder.spec.field_name, dialect=backend, sum_weights=weights
        )
        for qid in held[:2]:
            vec = tuple(float(x) for x in embedder.embed_queries([ds.queries[qid]])[0])
            hits = backend.search(result.index, EngineSum(ctx).body(QueryInput(qid, ds.queries[qid], vec)))
            assert _order(hits.ranking)[:10] == _order(run[qid])[:10], (i, qid)
    assert set(union) == set(ds.queries)  # the arm's run and score are the union of the held-out folds
    assert arm.metrics["ndcg@10"] == pytest.approx(
        evaluate(ds.qrels, union, ["ndcg@10"]).means["ndcg@10"], abs=1e-6
    )

    # a rerun searches nothing: every arm, the sum's folds included, comes from its checkpoint
    sent: list[int] = []
    real = arms.run_searches
    monkeypatch.setattr(arms, "run_searches", lambda *a, **k: sent.append(len(a[2])) or real(*a, **k))
    files = sorted(ckpt.rglob("*.json"))
    before = {p: p.stat().st_mtime_ns for p in files}
    _run(backend.url, data, out)
    assert sent == [] and {p: p.stat().st_mtime_ns for p in files} == before
    again = RunResults.load(out).datasets[NAME].arms[ARM]
    assert again.fold_weights == arm.fold_weights and again.metrics == arm.metrics
