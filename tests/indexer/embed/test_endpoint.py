"""Embeddings through an OpenAI-compatible ``/v1/embeddings`` endpoint (``openai:MODEL``).

The endpoint is the test server (tests/_openai_server.py) serving the stand-in encoder's vectors
(tests/_encoder.py): what arrives must be what it computed, for each text, in order. The same model through
an endpoint and locally is tests/harness/test_endpoint_embeddings.py's (MiniLM on both sides).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import numpy as np
import pytest

from base import EmbeddingError, Endpoint, Retry
from indexer.embed import (
    PROBE_TEXT,
    CachedEmbedder,
    EmbeddingCache,
    EndpointEncoder,
    build_encoder,
    resolve_model,
)
from tests._encoder import stand_in_vector
from tests._openai_server import Fault, OpenAIServer, rate_limited

TEXTS = [f"Claim {i}: {'aspirin lowers fever ' * (i % 5 + 1)}in adults." for i in range(70)]


def _endpoint(server: OpenAIServer, **kwargs: object) -> Endpoint:
    return Endpoint(base_url=server.url, retry=Retry(max_retries=3, initial_backoff_s=0.01), **kwargs)  # type: ignore[arg-type]


def test_openai_spec_names_its_own_field_and_learns_dims_later() -> None:
    spec = resolve_model("openai:BAAI/bge-small-en-v1.5@2024-06")
    assert (spec.model_id, spec.path_or_name, spec.revision) == (
        "openai:BAAI/bge-small-en-v1.5",
        "BAAI/bge-small-en-v1.5",
        "2024-06",
    )
    assert spec.field_name == "vec_openai_baai_bge_small_en_v1_5" and spec.dims is None
    assert resolve_model("openai:text-embedding-3-small").revision == "endpoint"
    with pytest.raises(EmbeddingError, match="expected openai:MODEL"):
        resolve_model("openai:")


def test_endpoint_vectors_are_the_servers_own(server: OpenAIServer) -> None:
    spec = resolve_model("openai:minilm")
    encoder = EndpointEncoder(spec, _endpoint(server), batch_size=32)
    assert encoder.dims == 384, "the dimension comes from the first answer"
    assert server.state.calls["embeddings"] == 1
    remote = encoder.encode(TEXTS)
    served = np.stack([stand_in_vector(text) for text in TEXTS])
    assert remote.shape == served.shape == (70, 384)
    assert np.allclose(remote, served, atol=1e-6), float(np.abs(remote - served).max())
    assert server.state.calls["embeddings"] == 1 + 3, "70 texts in batches of 32: 3 requests"
    assert encoder.stats.model_calls == 3 and encoder.stats.texts_encoded == 70
    probe = len(PROBE_TEXT.split())
    assert encoder.stats.tokens == sum(len(t.split()) for t in TEXTS) + probe, "the server counts words"


def test_cached_embedder_second_run_makes_no_call(server: OpenAIServer, tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path)
    spec = resolve_model("openai:minilm")
    first = CachedEmbedder(build_encoder(spec, endpoint=_endpoint(server), cache=cache), cache)
    vectors = first.embed_queries(TEXTS[:10])
    calls = server.state.calls["embeddings"]
    assert calls == 2, "the probe, then one batch"
    again = CachedEmbedder(build_encoder(spec, endpoint=_endpoint(server), cache=cache), cache)
    assert np.array_equal(again.embed_queries(TEXTS[:10]), vectors)
    assert again.encoder.dims == 384
    assert server.state.calls["embeddings"] == calls, "dims and vectors both come from the cache"


def test_429_and_5xx_are_retried(server: OpenAIServer) -> None:
    server.state.fail_next("embeddings", Fault(503), rate_limited(retry_after_ms="10"), Fault(500))
    encoder = EndpointEncoder(resolve_model("openai:minilm"), _endpoint(server, concurrency=1), batch_size=40)
    out = encoder.encode(TEXTS)
    assert out.shape == (70, 384) and encoder.stats.retries == 3
    assert server.state.answered["embeddings"] == 3


def test_a_refusal_fails_at_once_with_the_endpoints_words(server: OpenAIServer) -> None:
    server.state.fail_next("embeddings", Fault(404, message="model 'nope' not found"))
    encoder = EndpointEncoder(resolve_model("openai:nope"), _endpoint(server))
    with pytest.raises(EmbeddingError) as info:
        encoder.encode(TEXTS[:3])
    text = str(info.value)
    assert "HTTP 404: model 'nope' not found" in text and f"does {server.url} serve model 'nope'" in text
    assert server.state.calls["embeddings"] == 1, "a 404 is not retried"


def test_an_endpoint_that_is_not_there_fails_at_the_first_batch() -> None:
    with socket.socket() as sock:  # a port where nothing listens
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    encoder = EndpointEncoder(resolve_model("openai:minilm"), Endpoint(base_url=url))  # the default policy
    began = time.monotonic()
    with pytest.raises(EmbeddingError) as info:
        encoder.encode(TEXTS[:3])
    assert time.monotonic() - began < 10 and encoder.stats.retries == 0
    assert str(info.value) == (
        f"no embeddings for model 'minilm': expected an OpenAI-compatible endpoint at {url} (--embed-url), found "
        "nothing listening there (connection refused): start the server, or give the URL it listens on"
    )


def test_base_url_is_refused_for_a_local_model(server: OpenAIServer) -> None:
    with pytest.raises(EmbeddingError, match=r"--embed-url \(embedding.url\) is for endpoint models"):
        build_encoder(resolve_model("minilm"), endpoint=_endpoint(server))
