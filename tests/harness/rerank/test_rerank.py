"""The rerank stage against the real engine, on a SciFact cut.

No cross-encoder weights can be downloaded here: the bi-encoder path is tested for quality with the
packaged all-MiniLM-L6-v2, and the cross-encoder path gets a PLUMBING test (not a quality test) with a
tiny cross-encoder built in the test from random weights and the packaged model's tokenizer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from base import ConfigError
from harness.cli import main
from harness.rerank import CrossEncoderReranker, RerankSpec, make_reranker
from harness.results import RunResults
from indexer import EmbeddingCache
from indexer.embed import bundled_model_path
from tests._support import scifact_subset


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("rerank") / "rerank-subset", n_docs=300, n_test=30, n_train=3
    )


def _ranking(path: Path) -> dict[str, list[str]]:
    rows: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, rank, _, _ = line.split()
        rows.setdefault(qid, []).append((int(rank), doc))
    return {q: [d for _, d in sorted(r)] for q, r in rows.items()}


def _run(es_url: str, data_dir: Path, out: Path, *argv: str) -> RunResults:
    args = ["run", *argv, "--dataset", str(data_dir), "--output", str(out), "--url", es_url]
    assert main([*args, "--no-progress", "--records", "jsonl"]) == 0
    return RunResults.load(out)


def test_reranking_the_vector_arm_with_its_own_model_changes_nothing(
    es_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """A real invariant: exact cosine under the model that built the index orders the kNN hits as the engine did."""
    results = _run(es_url, data_dir, tmp_path / "v", "vector", "--rerank", "minilm@100")
    ds = results.datasets["rerank-subset"]
    assert list(ds.arms) == ["vector", "vector>rerank"]
    runs = tmp_path / "v" / "runs" / "rerank-subset"
    assert _ranking(runs / "vector>rerank.trec") == _ranking(runs / "vector.trec")
    assert ds.arms["vector>rerank"].metrics == ds.arms["vector"].metrics
    assert [(c.arm_a, c.arm_b) for c in ds.significance] == [("vector", "vector>rerank")]


def test_hybrid_reranked_by_a_bi_encoder_is_an_arm_of_its_own(
    es_url: str, data_dir: Path, tmp_path: Path
) -> None:
    results = _run(es_url, data_dir, tmp_path / "h", "hybrid", "--rerank", "minilm@20")
    ds = results.datasets["rerank-subset"]
    assert list(ds.arms)[-1] == "hybrid>rerank"
    assert ("hybrid", "hybrid>rerank") in {(c.arm_a, c.arm_b) for c in ds.significance}
    assert (
        results.manifest.config["rerank"]["kind"] == "bi" and results.manifest.config["rerank"]["depth"] == 20
    )
    runs = tmp_path / "h" / "runs" / "rerank-subset"
    hybrid, reranked = _ranking(runs / "hybrid.trec"), _ranking(runs / "hybrid>rerank.trec")
    for qid, docs in hybrid.items():
        assert set(reranked[qid][:20]) == set(docs[:20]) and reranked[qid][20:] == docs[20:]
    vector = _ranking(
        runs / "vector.trec"
    )  # within the top 20 the order is the bi-encoder's: the vector arm's
    for qid, docs in reranked.items():
        assert docs[:20] == [d for d in vector[qid] if d in set(docs[:20])] + [
            d for d in docs[:20] if d not in vector[qid]
        ]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT sequence classifier with random weights and MiniLM's tokenizer: plumbing only."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("cross") / "tiny-cross-encoder"
    tokenizer = AutoTokenizer.from_pretrained(str(bundled_model_path()), local_files_only=True)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, num_labels=1, max_position_embeddings=512,
    )  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_cross_encoder_plumbing(
    es_url: str, data_dir: Path, tmp_path: Path, tiny_cross_encoder: Path
) -> None:
    """PLUMBING, not quality: the folder is recognised as a cross-encoder, its scores reorder the top-k, and
    a second scoring comes from the cache (0 model calls)."""
    reranker = make_reranker(RerankSpec.parse(f"{tiny_cross_encoder}@10"))
    assert isinstance(reranker, CrossEncoderReranker)
    results = _run(es_url, data_dir, tmp_path / "c", "lexical", "--rerank", f"{tiny_cross_encoder}@10")
    assert list(results.datasets["rerank-subset"].arms) == ["lexical", "lexical>rerank"]
    runs = tmp_path / "c" / "runs" / "rerank-subset"
    lexical, reranked = _ranking(runs / "lexical.trec"), _ranking(runs / "lexical>rerank.trec")
    assert any(reranked[q][:10] != lexical[q][:10] for q in lexical)
    cache = EmbeddingCache(tmp_path / "scores")
    reranker = CrossEncoderReranker(str(tiny_cross_encoder), cache)
    queries = {"q": "vitamin d and bone density"}
    texts = {"a": "Vitamin D supplementation and bone mineral density.", "b": "Gene expression in yeast."}
    first = reranker.score(queries, {"q": ["a", "b"]}, texts)
    assert reranker.model_calls == 1 and first["q"]["a"] != first["q"]["b"]
    fresh = CrossEncoderReranker(str(tiny_cross_encoder), cache)
    assert fresh.score(queries, {"q": ["a", "b"]}, texts) == first and fresh.model_calls == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("minilm@0", "between 1 and 1000"),
        ("minilm@x", "expected a number"),
        ("@5", r"expected MODEL\[@DEPTH\]"),
    ],
)
def test_bad_rerank_specs(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RerankSpec.parse(text)
    assert RerankSpec.parse("cross:/m@30") == RerankSpec("/m", 30, "cross")
