from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import CachedEmbedder, EmbeddingCache, ModelSpec, document_text, spec_key
from tests._encoder import SPEC, StandInEncoder, stand_in_vector

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture()
def spec() -> ModelSpec:
    """The stand-in encoder's spec: the machinery is tested without a model (tests/_encoder.py); what the
    real model computes is test_encoder.py's and test_backends.py's (marked ``model``)."""
    return SPEC


@pytest.fixture(scope="module")
def reference_vectors(scifact_docs: list[tuple[str, str]]) -> np.ndarray:
    """What the stand-in gives each abstract (without a prompt), computed apart from any embedder."""
    return np.stack([stand_in_vector(text) for _, text in scifact_docs])


def embedder(spec: ModelSpec, cache_dir: Path | None, window: int = 16) -> CachedEmbedder:
    cache = EmbeddingCache(cache_dir) if cache_dir is not None else None
    return CachedEmbedder(StandInEncoder(spec, batch_size=8), cache, window=window)


def collect(chunks: Iterator[tuple[list[str], np.ndarray]]) -> tuple[list[str], np.ndarray]:
    ids: list[str] = []
    parts: list[np.ndarray] = []
    for chunk_ids, vectors in chunks:
        assert vectors.shape == (len(chunk_ids), 384)
        ids += chunk_ids
        parts.append(vectors)
    return ids, np.concatenate(parts)


def test_streams_windows_in_input_order(
    spec: ModelSpec, scifact_docs: list[tuple[str, str]], reference_vectors: np.ndarray, tmp_path: Path
) -> None:
    emb = embedder(spec, tmp_path, window=16)
    chunks = list(emb.embed_documents(scifact_docs))
    assert [len(ids) for ids, _ in chunks] == [16, 16]
    ids, vectors = collect(iter(chunks))
    assert ids == [doc_id for doc_id, _ in scifact_docs]
    np.testing.assert_allclose(vectors, reference_vectors, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    stats = emb.stats
    assert (stats.texts, stats.cache_hits, stats.cache_misses, stats.texts_encoded) == (32, 0, 32, 32)
    assert stats.model_calls == 4  # 2 windows x 2 batches of 8


def test_input_is_consumed_lazily(spec: ModelSpec, scifact_docs: list[tuple[str, str]]) -> None:
    pulled = 0

    def source() -> Iterator[tuple[str, str]]:
        nonlocal pulled
        for doc in scifact_docs:
            pulled += 1
            yield doc

    stream = embedder(spec, None, window=16).embed_documents(source())
    next(stream)
    assert pulled == 16  # one window in memory, not the corpus
    stream.close()


def test_warm_run_makes_no_model_calls_and_returns_identical_vectors(
    spec: ModelSpec, scifact_docs: list[tuple[str, str]], reference_vectors: np.ndarray, tmp_path: Path
) -> None:
    # the cold run: fill the cache with the vectors computed once for this session
    with EmbeddingCache(tmp_path) as cache:
        cache.put_many(
            (spec_key(spec, "", text), vector)
            for (_, text), vector in zip(scifact_docs, reference_vectors, strict=True)
        )
    cold_ids, cold_vectors = [doc_id for doc_id, _ in scifact_docs], reference_vectors

    warm = embedder(spec, tmp_path)  # a fresh process would build exactly this
    warm_ids, warm_vectors = collect(warm.embed_documents(scifact_docs))
    assert warm_ids == cold_ids
    assert np.array_equal(warm_vectors, cold_vectors)
    assert warm.stats.model_calls == 0
    assert warm.encoder.stats.model_calls == 0
    assert not warm.encoder.loaded  # not even loaded
    assert (warm.stats.cache_hits, warm.stats.cache_misses) == (32, 0)


def test_changed_prompt_misses_the_cache(
    spec: ModelSpec, scifact_docs: list[tuple[str, str]], tmp_path: Path
) -> None:
    docs = scifact_docs[:8]
    collect(embedder(spec, tmp_path).embed_documents(docs))
    prompted = embedder(spec.with_prompts(document_prompt="passage: "), tmp_path)
    _, vectors = collect(prompted.embed_documents(docs))
    assert prompted.stats.cache_hits == 0
    assert prompted.stats.texts_encoded == 8
    plain = embedder(spec, tmp_path)
    _, plain_vectors = collect(plain.embed_documents(docs))
    assert plain.stats.model_calls == 0
    assert np.abs(vectors - plain_vectors).max() > 1e-3


def test_queries_use_the_query_prompt_and_are_cached(spec: ModelSpec, tmp_path: Path) -> None:
    spec = spec.with_prompts(query_prompt="query: ", document_prompt="passage: ")
    texts = ["vitamin D and fractures", "statins in elderly patients", "vitamin D and fractures"]
    emb = embedder(spec, tmp_path)
    queries = emb.embed_queries(texts)
    assert queries.shape == (3, 384)
    assert emb.stats.texts_encoded == 2  # the repeated query is encoded once
    np.testing.assert_array_equal(queries[0], queries[2])
    _, docs = collect(emb.embed_documents([("d0", texts[0])]))
    assert np.abs(queries[0] - docs[0]).max() > 1e-3

    again = embedder(spec, tmp_path)
    np.testing.assert_array_equal(again.embed_queries(texts), queries)
    assert again.stats.model_calls == 0
    assert again.embed_queries([]).shape == (0, 384)


def test_without_a_cache_everything_is_encoded(spec: ModelSpec, scifact_docs: list[tuple[str, str]]) -> None:
    emb = embedder(spec, None)
    collect(emb.embed_documents(scifact_docs[:8]))
    collect(emb.embed_documents(scifact_docs[:8]))
    assert emb.stats.texts_encoded == 16
    assert emb.stats.cache_hits == 0


def test_progress_bar_reports_docs_per_second(
    spec: ModelSpec, scifact_docs: list[tuple[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    collect(embedder(spec, None).embed_documents(scifact_docs[:16], progress=True, total=16))
    err = capsys.readouterr().err
    assert "docs/s" in err
    assert "16/16" in err


CRASHING_RUN = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    sys.path.insert(0, {repo!r})
    from conftest import load_scifact_docs
    from indexer.embed import CachedEmbedder, EmbeddingCache
    from tests._encoder import StandInEncoder

    emb = CachedEmbedder(StandInEncoder(batch_size=8), EmbeddingCache({cache!r}), window=8)
    for n, _ in enumerate(emb.embed_documents(load_scifact_docs(32)), start=1):
        if n == 2:
            os.kill(os.getpid(), signal.SIGKILL)  # hard crash: no cleanup, no close
    """
)


def test_rerun_after_a_crash_reuses_what_was_committed(
    spec: ModelSpec, scifact_docs: list[tuple[str, str]], reference_vectors: np.ndarray, tmp_path: Path
) -> None:
    script = CRASHING_RUN.format(tests=str(Path(__file__).parent), repo=str(REPO), cache=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert os.path.exists(tmp_path / "vectors.sqlite3")

    docs = scifact_docs[:32]
    rerun = embedder(spec, tmp_path, window=8)
    ids, vectors = collect(rerun.embed_documents(docs))
    assert ids == [doc_id for doc_id, _ in docs]
    assert rerun.stats.cache_hits == 16  # the two windows yielded before the crash
    assert rerun.stats.texts_encoded == 16
    np.testing.assert_allclose(vectors, reference_vectors[:32], atol=1e-5)


def test_document_text_joins_title_and_body() -> None:
    assert document_text("Title.", "Body text") == "Title. Body text"
    assert document_text("", " Body ") == "Body"
    assert document_text(None, "Body") == "Body"
    assert document_text("Title", None) == "Title"
