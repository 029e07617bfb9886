from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from base import EmbeddingError
from indexer.embed import Encoder, ModelSpec, batch_order, l2_normalize


def texts_of(docs: list[tuple[str, str]]) -> list[str]:
    return [text for _, text in docs]


def test_model_loads_lazily_and_reports_its_dims(minilm: ModelSpec) -> None:
    encoder = Encoder(minilm, device="cpu")
    assert not encoder.loaded
    assert encoder.dims == 384
    assert encoder.loaded
    assert encoder.device == "cpu"
    assert encoder.max_seq_length > 0


def test_vectors_are_normalised_float32_and_deterministic(
    minilm: ModelSpec, scifact_docs: list[tuple[str, str]], reference_vectors: np.ndarray
) -> None:
    texts = texts_of(scifact_docs)
    assert reference_vectors.dtype == np.float32
    assert reference_vectors.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(reference_vectors, axis=1), 1.0, atol=1e-5)
    # different abstracts really get different vectors
    assert np.abs(reference_vectors[0] - reference_vectors[1]).max() > 1e-2
    # a fresh encoder (same batches) gives the same vectors
    again = Encoder(minilm, device="cpu").encode_documents(texts[:32])
    np.testing.assert_allclose(again, reference_vectors[:32], atol=1e-6)


def test_sorted_and_unsorted_batches_give_the_same_vectors_in_input_order(
    minilm: ModelSpec, scifact_docs: list[tuple[str, str]], reference_vectors: np.ndarray
) -> None:
    texts = texts_of(scifact_docs)
    lengths = [len(t) for t in texts]
    assert lengths != sorted(lengths, reverse=True)  # so sorting really reorders the batches
    # the reference was made with length-sorted batches of 32; now the input order, batches of 16
    unsorted_enc = Encoder(minilm, device="cpu", batch_size=16, sort_by_length=False)
    by_unsorted = unsorted_enc.encode_documents(texts)
    assert unsorted_enc.stats.model_calls == 2
    np.testing.assert_allclose(reference_vectors, by_unsorted, atol=1e-5)
    # and row i is text i: compare with texts encoded one at a time
    alone = Encoder(minilm, device="cpu", batch_size=1)
    for i in (0, 17, 31):
        np.testing.assert_allclose(reference_vectors[i], alone.encode_documents([texts[i]])[0], atol=1e-5)


def test_batch_order_puts_longest_first_or_keeps_input_order() -> None:
    lengths = [2, 1, 4, 3, 1]
    assert batch_order(lengths, sort_by_length=True).tolist() == [2, 3, 0, 1, 4]
    assert batch_order(lengths, sort_by_length=False).tolist() == [0, 1, 2, 3, 4]


def test_lengths_are_tokens_capped_at_the_model_limit(
    minilm: ModelSpec, scifact_docs: list[tuple[str, str]]
) -> None:
    encoder = Encoder(minilm, device="cpu")
    long_text = max(texts_of(scifact_docs), key=len)
    lengths = encoder.text_lengths(["aspirin", "aspirin and heart attacks", long_text])
    assert lengths[0] < lengths[1] < lengths[2]
    assert lengths[1] < 10  # word pieces plus [CLS]/[SEP], not characters
    assert lengths[2] == encoder.max_seq_length == 256


def test_one_model_call_per_batch_is_counted(minilm: ModelSpec, scifact_docs: list[tuple[str, str]]) -> None:
    texts = [text[:40] for text in texts_of(scifact_docs)[:30]]  # counting needs no long texts
    encoder = Encoder(minilm, device="cpu", batch_size=16)
    encoder.encode_documents(texts)
    assert encoder.stats.model_calls == math.ceil(30 / 16)
    assert encoder.stats.texts_encoded == 30
    seen: list[int] = []
    encoder.encode(texts, batch_size=7, on_batch=seen.append)
    assert seen == [7, 7, 7, 7, 2]
    assert encoder.stats.model_calls == 2 + 5
    assert encoder.stats.seconds > 0


def test_prompts_are_prepended_and_distinguish_queries_from_documents(minilm: ModelSpec) -> None:
    text = "Does vitamin D supplementation reduce the risk of fractures?"
    prompted = Encoder(minilm.with_prompts(query_prompt="query: ", document_prompt="passage: "), device="cpu")
    query, document = prompted.encode_queries([text])[0], prompted.encode_documents([text])[0]
    assert np.abs(query - document).max() > 1e-3
    plain = Encoder(minilm, device="cpu")
    np.testing.assert_allclose(query, plain.encode_documents(["query: " + text])[0], atol=1e-5)
    np.testing.assert_allclose(document, plain.encode_documents(["passage: " + text])[0], atol=1e-5)
    # without prompts a query and a document of the same text are the same vector
    np.testing.assert_allclose(plain.encode_queries([text])[0], plain.encode_documents([text])[0], atol=1e-6)


def test_empty_input_gives_an_empty_matrix(minilm: ModelSpec) -> None:
    out = Encoder(minilm, device="cpu").encode_documents([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


def test_declared_dims_that_disagree_with_the_model_are_an_error(minilm: ModelSpec) -> None:
    wrong = dataclasses.replace(minilm, dims=768)
    with pytest.raises(EmbeddingError, match="produces 384-dimensional vectors, expected 768"):
        Encoder(wrong, device="cpu").load()


def test_a_model_that_cannot_load_is_an_embedding_error(model_runtime: object, tmp_path: object) -> None:
    spec = ModelSpec(model_id="local/broken", path_or_name=str(tmp_path), revision="x")
    with pytest.raises(EmbeddingError, match="could not load embedding model 'local/broken'"):
        Encoder(spec, device="cpu").load()


def test_bad_batch_size_is_refused(minilm: ModelSpec) -> None:
    with pytest.raises(EmbeddingError, match="batch size must be positive, found 0"):
        Encoder(minilm, batch_size=0)


def test_l2_normalize_keeps_zero_rows() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])
    assert out.dtype == np.float32
